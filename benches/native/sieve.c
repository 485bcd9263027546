/* Sieve of Eratosthenes: the number of primes below 50,000,000. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    int n = 50000000;
    unsigned char *s = malloc(n);
    for (int i = 0; i < n; i++) s[i] = 1;
    s[0] = 0;
    s[1] = 0;
    for (int i = 2; i * i < n; i++)
        if (s[i])
            for (int j = i * i; j < n; j += i) s[j] = 0;
    int count = 0;
    for (int k = 0; k < n; k++) count += s[k];
    printf("%d\n", count);
    free(s);
    return 0;
}
