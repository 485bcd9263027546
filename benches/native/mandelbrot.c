/* Mandelbrot set: total iterations over a 1600x1600 grid, at most 256 per point. */
#include <stdio.h>

int main(void) {
    int w = 1600, h = 1600, max_iter = 256;
    long long total = 0;
    for (int py = 0; py < h; py++) {
        double ci = (double)py * 2.0 / (double)h - 1.0;
        for (int px = 0; px < w; px++) {
            double cr = (double)px * 3.0 / (double)w - 2.0;
            double zr = 0.0, zi = 0.0;
            int k = 0;
            while (k < max_iter && zr * zr + zi * zi <= 4.0) {
                double t = zr * zr - zi * zi + cr;
                zi = 2.0 * zr * zi + ci;
                zr = t;
                k++;
            }
            total += k;
        }
    }
    printf("%lld\n", total);
    return 0;
}
