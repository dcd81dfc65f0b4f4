/*===- tandem_runtime.h - the C ABI compiled models call ------------------===*
 *
 * A compiled model's main() calls tandem_rt_main with its model image (see
 * tandem/runtime/ModelImage.h), its string table, the table of its generated
 * kernels (one image::FusedKernel per fused group) and its compiled body. The
 * body calls the other functions: it gets arena bases, inputs and host
 * weights, executes each op on the buffers the memory plan gave it, and hands
 * its results back.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TANDEM_RUNTIME_H
#define TANDEM_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TandemRuntime TandemRuntime;

/* Parses the command line, loads inputs and weights, runs `run` (--repeat
 * times), writes the outputs. Returns the process exit status. A model with
 * an at-load function (its image's atLoadOffset) also runs `run` once while
 * its weights load: tandem_rt_at_load then names the runtime the body runs
 * that function's ops on. */
int tandem_rt_main(int argc, char **argv, const int64_t *image,
                   const char *strings, const void *kernels,
                   void (*run)(TandemRuntime *));

/* The library form (tandem-compile --emit=lib): open a runtime for a model
 * once (weights from a safetensors file, `backend` "sim", "cuda" or "auto"),
 * run it on caller-owned buffers of the model's shapes, close it. Errors
 * return null or non-zero and write a message into `error`. */
TandemRuntime *tandem_rt_open(const int64_t *image, const char *strings,
                              const void *kernels,
                              void (*run)(TandemRuntime *),
                              const char *weights, const char *backend,
                              char *error, int64_t errorSize);
int tandem_rt_infer(TandemRuntime *rt, void (*run)(TandemRuntime *),
                    const void *const *inputs, void *const *outputs,
                    char *error, int64_t errorSize);
void tandem_rt_close(TandemRuntime *rt);

/* Opens a runtime into `*slot` unless one is already there (an error that
 * leaves it as it was). Returns 0 on success. Calls to tandem_rt_infer on one
 * runtime from several threads run one at a time; closing the last open
 * runtime stops the runtime's worker threads. */
int tandem_rt_load(TandemRuntime **slot, const int64_t *image,
                   const char *strings, const void *kernels,
                   void (*run)(TandemRuntime *), const char *weights,
                   const char *backend, char *error, int64_t errorSize);

/* While the weights load, the runtime of the model's at-load function (the
 * body runs that function's ops on it); otherwise null. */
TandemRuntime *tandem_rt_at_load(TandemRuntime *rt);

/* Base of the arena of `device` (0: CPU, 1: GPU). */
void *tandem_rt_arena(TandemRuntime *rt, int32_t device);

/* The buffer of input `index`, on the CPU. */
void *tandem_rt_input(TandemRuntime *rt, int32_t index);

/* The host copy of weight `index`. */
void *tandem_rt_weight(TandemRuntime *rt, int32_t index);

/* Executes op `op` of the image: `operands` holds one buffer per operand,
 * `result` is its result buffer. */
void tandem_rt_execute(TandemRuntime *rt, int32_t op, void **operands,
                       void *result);

/* Result `index` of the model is in `data` (on the CPU). */
void tandem_rt_output(TandemRuntime *rt, int32_t index, void *data);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_RUNTIME_H */
