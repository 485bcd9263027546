/* A 3x3 blur (weights 1 2 1 / 2 4 2 / 1 2 1, over 16) with clamped borders on a 2048x2048
   float image, 20 passes; the sum of the result. */
#include <stdio.h>
#include <stdlib.h>

static int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static float weight(int d) { return d == 0 ? 2.0f : 1.0f; }

static void blur(const float *in, float *out, int w, int h) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float s = 0.0f;
            for (int dy = -1; dy < 2; dy++)
                for (int dx = -1; dx < 2; dx++) {
                    int xx = clamp(x + dx, 0, w - 1);
                    int yy = clamp(y + dy, 0, h - 1);
                    s += in[yy * w + xx] * (weight(dx) * weight(dy) / 16.0f);
                }
            out[y * w + x] = s;
        }
}

int main(void) {
    int w = 2048, h = 2048;
    float *a = malloc((size_t)w * h * 4), *b = malloc((size_t)w * h * 4);
    for (int i = 0; i < w * h; i++) a[i] = (float)((i * 7) % 256);
    for (int pass = 0; pass < 10; pass++) {
        blur(a, b, w, h);
        blur(b, a, w, h);
    }
    double sum = 0.0;
    for (int i = 0; i < w * h; i++) sum += a[i];
    printf("%g\n", sum);
    free(a);
    free(b);
    return 0;
}
