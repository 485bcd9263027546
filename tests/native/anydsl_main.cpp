// A C++ main written against AnyDSL's runtime API: `anydsl::Array`s on the host, copies
// between them, the C functions of `anydsl_runtime.h`, and a function that durin compiled
// (box3.art), whose result it checks against its own computation.
#include <anydsl_runtime.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

extern "C" void box3(short*, short*, int, int);

int main() {
    const int width = 37, height = 23;
    anydsl::Array<short> input(width * height);
    anydsl::Array<short> output(width * height);
    for (int i = 0; i < width * height; ++i) input[i] = (short)((i * 7919) % 1000);

    // Through a second array, moved and copied.
    anydsl::Array<short> staged(anydsl::Platform::Host, anydsl::Device(0), width * height);
    anydsl::copy(input, staged);
    anydsl::Array<short> moved(std::move(staged));
    box3(moved.data(), output.data(), width, height);

    int wrong = 0;
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            int sum = 0;
            for (int dy = -1; dy <= 1; ++dy) {
                for (int dx = -1; dx <= 1; ++dx) {
                    int xx = x + dx < 0 ? 0 : (x + dx >= width ? width - 1 : x + dx);
                    int yy = y + dy < 0 ? 0 : (y + dy >= height ? height - 1 : y + dy);
                    sum += input[yy * width + xx];
                }
            }
            if (output[y * width + x] != (short)(sum / 9)) ++wrong;
        }
    }
    std::printf("box3: %d of %d pixels wrong\n", wrong, width * height);

    // A partial copy with offsets.
    anydsl::Array<short> part(10);
    anydsl::copy(output, 5, part, 0, 10);
    std::printf("part: %s\n", std::memcmp(part.data(), output.data() + 5, 10 * sizeof(short)) == 0 ? "equal" : "different");

    std::printf("host: %s, ITS: %d\n", anydsl_device_name(ANYDSL_HOST),
                (int)anydsl_device_check_feature_support(ANYDSL_HOST, "ITS"));
    std::printf("nan %d %d, inf %d %d, finite %d %d\n", anydsl_isnanf(NAN), anydsl_isnan(1.0),
                anydsl_isinff(INFINITY), anydsl_isinf(-INFINITY), anydsl_isfinitef(2.0f),
                anydsl_isfinite(NAN));
    void* p = anydsl_aligned_malloc(100, 256);
    std::printf("aligned: %d\n", (int)((uintptr_t)p % 256 == 0));
    anydsl_aligned_free(p);
    anydsl_print_i32(-42);
    anydsl_print_char('\n');
    anydsl_print_flush();
    return 0;
}
