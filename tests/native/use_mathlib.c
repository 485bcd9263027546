/* Calls the functions that mathlib.art exports, through the header durin generates. */
#include <stdio.h>
#include "mathlib.h"

int main(void) {
    float a[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    float b[4] = {0.5f, 0.25f, 2.0f, -1.0f};
    double v[3] = {1.5, -2.0, 4.0};
    greet();
    printf("dot %g\n", dot(a, b, 4));
    scale(v, 3, 2.0);
    printf("scale %g %g %g\n", v[0], v[1], v[2]);
    printf("lcm %lld\n", (long long)lcm(21, 6));
    printf("even %d %d\n", is_even(10), is_even(7));
    return 0;
}
