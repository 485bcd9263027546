/*
 * durin's runtime for C and C++ programs: the C API of AnyDSL's runtime
 * (`anydsl_runtime.h`), so that a main program written against AnyDSL links with the
 * object file of `durin build` and durin's runtime library, `libdurin_runtime.a`:
 *
 *     durin build --target cpu -o prog.o prog.art
 *     c++ -I <durin>/runtime/include main.cpp prog.o libdurin_runtime.a \
 *         -lpthread -ldl -lm -o prog
 *
 * Device numbers are AnyDSL's: the platform in the low four bits, the device above
 * them (`ANYDSL_DEVICE(ANYDSL_CUDA, 0)` is the first GPU). This runtime has the host and
 * CUDA; a device of another platform is a run-time error that says so. AnyDSL's task
 * graphs (`anydsl_create_graph` ...), `anydsl_launch_kernel` and `anydsl_parallel_for`,
 * which only generated code calls (durin's parallel loop passes its body differently), are
 * not declared.
 */
#ifndef ANYDSL_RUNTIME_H
#define ANYDSL_RUNTIME_H

#include <stdint.h>
#include <stdlib.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifndef AnyDSL_runtime_API
#define AnyDSL_runtime_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define ANYDSL_DEVICE(p, d) ((p) | ((d) << 4))

enum {
    ANYDSL_HOST = 0,
    ANYDSL_CUDA = 1,
    ANYDSL_OPENCL = 2,
    ANYDSL_HSA = 3,
    ANYDSL_PAL = 4,
    ANYDSL_LEVELZERO = 5
};

/* The platforms and their devices, on standard output. */
AnyDSL_runtime_API void anydsl_info(void);
/* "CPU" for the host, the GPU's name for a CUDA device. */
AnyDSL_runtime_API const char* anydsl_device_name(int32_t dev);
/* CUDA devices know "ITS" (independent thread scheduling). */
AnyDSL_runtime_API bool anydsl_device_check_feature_support(int32_t dev, const char* feature);

/* Memory aligned to 64 bytes; a device's memory, page-locked host memory for fast copies
 * to a device, or memory both address. */
AnyDSL_runtime_API void* anydsl_alloc(int32_t dev, int64_t size);
AnyDSL_runtime_API void* anydsl_alloc_host(int32_t dev, int64_t size);
AnyDSL_runtime_API void* anydsl_alloc_unified(int32_t dev, int64_t size);
AnyDSL_runtime_API void* anydsl_get_device_ptr(int32_t dev, void* ptr);
AnyDSL_runtime_API void  anydsl_release(int32_t dev, void* ptr);
AnyDSL_runtime_API void  anydsl_release_host(int32_t dev, void* ptr);

/* Copies `size` bytes from `src + offset_src` on `dev_src` to `dst + offset_dst` on
 * `dev_dst`. */
AnyDSL_runtime_API void anydsl_copy(int32_t dev_src, const void* src, int64_t offset_src,
                                    int32_t dev_dst, void* dst, int64_t offset_dst,
                                    int64_t size);
/* Waits for the device's kernels. */
AnyDSL_runtime_API void anydsl_synchronize(int32_t dev);

AnyDSL_runtime_API void     anydsl_random_seed(uint32_t seed);
AnyDSL_runtime_API float    anydsl_random_val_f32(void);
AnyDSL_runtime_API uint64_t anydsl_random_val_u64(void);

AnyDSL_runtime_API uint64_t anydsl_get_micro_time(void);
AnyDSL_runtime_API uint64_t anydsl_get_nano_time(void);
/* Microseconds spent in kernels (when profiling kernels). */
AnyDSL_runtime_API uint64_t anydsl_get_kernel_time(void);

AnyDSL_runtime_API int32_t anydsl_isinff(float x);
AnyDSL_runtime_API int32_t anydsl_isnanf(float x);
AnyDSL_runtime_API int32_t anydsl_isfinitef(float x);
AnyDSL_runtime_API int32_t anydsl_isinf(double x);
AnyDSL_runtime_API int32_t anydsl_isnan(double x);
AnyDSL_runtime_API int32_t anydsl_isfinite(double x);

AnyDSL_runtime_API void anydsl_print_i16(int16_t x);
AnyDSL_runtime_API void anydsl_print_i32(int32_t x);
AnyDSL_runtime_API void anydsl_print_i64(int64_t x);
AnyDSL_runtime_API void anydsl_print_u16(uint16_t x);
AnyDSL_runtime_API void anydsl_print_u32(uint32_t x);
AnyDSL_runtime_API void anydsl_print_u64(uint64_t x);
AnyDSL_runtime_API void anydsl_print_f32(float x);
AnyDSL_runtime_API void anydsl_print_f64(double x);
AnyDSL_runtime_API void anydsl_print_char(char c);
AnyDSL_runtime_API void anydsl_print_string(char* s);
AnyDSL_runtime_API void anydsl_print_flush(void);

/* Memory aligned to `align` bytes (a power of two), freed by anydsl_aligned_free. */
AnyDSL_runtime_API void* anydsl_aligned_malloc(size_t size, size_t align);
AnyDSL_runtime_API void  anydsl_aligned_free(void* ptr);

/* Starts `fun(args)` on a new thread; its number is for anydsl_sync_thread. */
AnyDSL_runtime_API int32_t anydsl_spawn_thread(void* args, void* fun);
AnyDSL_runtime_API void    anydsl_sync_thread(int32_t id);

#ifdef __cplusplus
}
#include "anydsl_runtime.hpp"
#endif

#endif
