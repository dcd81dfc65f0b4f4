// --tandem-place=explain: a remark per op with both costs, the copies and
// what decided it. Figures from the v100-32gb profile: e.g. the matmul is
// 2*256*512*512 FLOPs at 0.98 TFLOP/s + 2 us on the CPU = 138.957 us, at
// 10.99 TFLOP/s + 5 us on the GPU = 17.213 us, and its 512 KiB result takes
// 10 us + 524288 B / 12.6 GB/s = 51.610 us back to the host.
// RUN: tandem-opt %s --tandem-place="device-profile=v100-32gb gpu-memory=8MiB explain" -verify-diagnostics -o /dev/null

func.func @main(%ids: tensor<256xi64>, %x: tensor<256x512xf32>) -> tensor<256x512xf32> {
  // expected-remark @+1 {{on cpu: cpu 0.000 us, gpu 0.000 us; on the gpu it would not fit the GPU memory budget}}
  %table = tandem.weight "table" : tensor<100000x512xf32>
  // expected-remark @+1 {{on cpu: cpu 18.052 us, gpu 6.373 us; on the gpu it would not fit the GPU memory budget (and would add 16314.062 us)}}
  %rows = tandem.embedding %table, %ids : (tensor<100000x512xf32>, tensor<256xi64>) -> tensor<256x512xf32>
  // expected-remark @+1 {{on gpu: cpu 0.000 us, gpu 0.000 us; moving it to the cpu would add 93.220 us}}
  %w = tandem.weight "w" : tensor<512x512xf32>
  // expected-remark @+1 {{on gpu: cpu 138.957 us, gpu 17.213 us; its result moves to cpu (512.00 KiB, 51.610 us); reads an operand moved from cpu (512.00 KiB); moving it to the cpu would add 18.524 us}}
  %y = tandem.matmul %x, %w : (tensor<256x512xf32>, tensor<512x512xf32>) -> tensor<256x512xf32>
  // expected-remark @+1 {{on cpu: cpu 26.032 us, gpu 7.056 us; reads an operand moved from gpu (512.00 KiB); moving it to the gpu would add 32.635 us}}
  %s = tandem.add %y, %rows : tensor<256x512xf32>
  // expected-remark @+1 {{on cpu: cpu 18.021 us, gpu 6.371 us; pinned by tandem.pin}}
  %n = tandem.neg %s {tandem.pin = #tandem.device<cpu>} : tensor<256x512xf32>
  return %n : tensor<256x512xf32>
}
