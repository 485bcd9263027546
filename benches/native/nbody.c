/* N-body: the five Jovian planets, 5,000,000 steps of 0.01 days; the energy before and after. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define BODIES 5
enum { X = 0, Y = 5, Z = 10, VX = 15, VY = 20, VZ = 25, M = 30 };

static double energy(const double *b) {
    double e = 0.0;
    for (int i = 0; i < BODIES; i++) {
        e += 0.5 * b[M + i] * (b[VX + i] * b[VX + i] + b[VY + i] * b[VY + i] + b[VZ + i] * b[VZ + i]);
        for (int j = i + 1; j < BODIES; j++) {
            double dx = b[X + i] - b[X + j];
            double dy = b[Y + i] - b[Y + j];
            double dz = b[Z + i] - b[Z + j];
            e -= b[M + i] * b[M + j] / sqrt(dx * dx + dy * dy + dz * dz);
        }
    }
    return e;
}

static void advance(double *b, double dt) {
    for (int i = 0; i < BODIES; i++) {
        for (int j = i + 1; j < BODIES; j++) {
            double dx = b[X + i] - b[X + j];
            double dy = b[Y + i] - b[Y + j];
            double dz = b[Z + i] - b[Z + j];
            double d2 = dx * dx + dy * dy + dz * dz;
            double mag = dt / (d2 * sqrt(d2));
            double mi = b[M + i];
            double mj = b[M + j];
            b[VX + i] -= dx * mj * mag;
            b[VY + i] -= dy * mj * mag;
            b[VZ + i] -= dz * mj * mag;
            b[VX + j] += dx * mi * mag;
            b[VY + j] += dy * mi * mag;
            b[VZ + j] += dz * mi * mag;
        }
    }
    for (int i = 0; i < BODIES; i++) {
        b[X + i] += dt * b[VX + i];
        b[Y + i] += dt * b[VY + i];
        b[Z + i] += dt * b[VZ + i];
    }
}

int main(void) {
    double pi = 3.141592653589793, solar = 4.0 * pi * pi, days = 365.24;
    double *b = malloc(7 * 5 * sizeof(double));
    double init[5][7] = {
        {0, 0, 0, 0, 0, 0, 1},
        {4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01,
         1.66007664274403694e-03, 7.69901118419740425e-03, -6.90460016972063023e-05,
         9.54791938424326609e-04},
        {8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01,
         -2.76742510726862411e-03, 4.99852801234917238e-03, 2.30417297573763929e-05,
         2.85885980666130812e-04},
        {1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01,
         2.96460137564761618e-03, 2.37847173959480950e-03, -2.96589568540237556e-05,
         4.36624404335156298e-05},
        {1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01,
         2.68067772490389322e-03, 1.62824170038242295e-03, -9.51592254519715870e-05,
         5.15138902046611451e-05},
    };
    for (int i = 0; i < 5; i++) {
        b[X + i] = init[i][0];
        b[Y + i] = init[i][1];
        b[Z + i] = init[i][2];
        b[VX + i] = init[i][3] * days;
        b[VY + i] = init[i][4] * days;
        b[VZ + i] = init[i][5] * days;
        b[M + i] = init[i][6] * solar;
    }
    b[VX] = b[VY] = b[VZ] = 0.0;
    double px = 0, py = 0, pz = 0;
    for (int i = 0; i < BODIES; i++) {
        px += b[VX + i] * b[M + i];
        py += b[VY + i] * b[M + i];
        pz += b[VZ + i] * b[M + i];
    }
    b[VX] = -px / solar;
    b[VY] = -py / solar;
    b[VZ] = -pz / solar;
    printf("%g\n", energy(b));
    for (int s = 0; s < 5000000; s++) advance(b, 0.01);
    printf("%g\n", energy(b));
    free(b);
    return 0;
}
