/* A C interface to fusionscope's MLP variants, for programs in other languages: a Python process
 * that times PyTorch and our kernels side by side (scripts/bench_vs_torch.py, through ctypes)
 * loads libfusionscope_mlp.so and enqueues our forward passes on its own CUDA stream, so that both
 * are timed by the same code under the same recent load.
 *
 * Every function catches everything: failures come back as a NULL handle or a non-zero status,
 * with a sentence for a person in `error` (truncated to `error_size` bytes, always terminated). */
#ifndef FUSIONSCOPE_MLP_H
#define FUSIONSCOPE_MLP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define FS_MLP_API __attribute__((visibility("default")))
#else
#define FS_MLP_API
#endif

typedef struct fs_mlp fs_mlp;

/* 1 when `variant` applies to the configuration, 0 when not (with the reason in `error`), -1 when
 * the configuration or the variant cannot be read. Needs no device. */
FS_MLP_API int fs_mlp_supports(const char* config_json, const char* variant, char* error,
                               size_t error_size);

/* Sets up `variant` (e.g. "gated-gemm") of the configuration (JSON, as `kernels_bench
 * --print-config` writes it) on the current device: buffers, weights and `input_sets` input copies
 * drawn from the seed (0: as many as the runner would rotate through), and the kernels: timed at
 * set-up, or `pins` when not empty (RunOptions::pin_kernels). NULL on failure. */
FS_MLP_API fs_mlp* fs_mlp_create(const char* config_json, const char* variant, const char* pins,
                                 int input_sets, char* error, size_t error_size);
FS_MLP_API void fs_mlp_destroy(fs_mlp* mlp);

FS_MLP_API int fs_mlp_input_sets(const fs_mlp* mlp);
/* Launches per forward pass. */
FS_MLP_API int fs_mlp_kernels(const fs_mlp* mlp);
/* The kernels chosen at set-up, described for a person, and as pins text. */
FS_MLP_API const char* fs_mlp_kernel_path(const fs_mlp* mlp);
FS_MLP_API const char* fs_mlp_kernel_choices(const fs_mlp* mlp);

/* Enqueues one forward pass over input copy `set` (0 <= set < input sets) on `stream`, a
 * cudaStream_t of this process's current device (NULL: the legacy default stream). 0 on success. */
FS_MLP_API int fs_mlp_forward(fs_mlp* mlp, int set, void* stream, char* error, size_t error_size);

/* Copies the configuration's numbers that `name` holds into device memory at `dst` of this
 * process's current device, which holds exactly `bytes`: "weightN" and "biasN" (layer N's, in
 * PyTorch's nn.Linear layout; a gated MLP's layers are gate, up, down) or "input" (every input
 * copy, one after another). Another program can then compute on the same numbers. 0 on success. */
FS_MLP_API int fs_mlp_copy_data(const fs_mlp* mlp, const char* name, void* dst, size_t bytes,
                                char* error, size_t error_size);

/* Runs one pass into a poisoned output and compares it with the fp32 reference (the first and last
 * check_rows / 2 rows; 0: every row). 0 when the comparison ran; then *rel_error holds
 * ||out - ref|| / ||ref|| and *passed whether it is within the dtype's tolerance with no NaN. */
FS_MLP_API int fs_mlp_check(fs_mlp* mlp, unsigned long long check_rows, double* rel_error,
                            int* passed, char* error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
