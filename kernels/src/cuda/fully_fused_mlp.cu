#include <algorithm>
#include <string>

#include "../buffers.h"
#include "cuda_check.h"
#include "element.cuh"
#include "fully_fused_mlp.h"
#include "fully_fused_mlp_sm90.h"
#include "mma.cuh"

namespace fusionscope::kernels::detail {
namespace {

struct FusedParams {
  const void* input;
  void* output;
  int64_t rows;
  int layers;
  int widths[kFusedMaxLayers + 1];
  const void* weights[kFusedMaxLayers];
  const void* biases[kFusedMaxLayers];
  int weight_offset[kFusedMaxLayers];  // in elements of T, into shared memory
  int bias_offset[kFusedMaxLayers];    // in floats, after the weights
  int weight_elems;                    // all padded weights
  int bias_floats;
  int tile_stride;  // elements per activation row (widest + pad)
  int act_out;      // the activation on the last layer too (a segment of a longer MLP)
};

// Copies this warp's ROWS rows of input (zeros past the last row) into `tile`.
template <typename T, int ROWS>
__device__ __forceinline__ void prefetch_rows(const FusedParams& p, T* tile, int64_t tile_index,
                                              int lane) {
  const int in = p.widths[0];
  const int chunks_per_row = in / 8;
  const T* src = static_cast<const T*>(p.input);
  for (int c = lane; c < ROWS * chunks_per_row; c += 32) {
    const int r = c / chunks_per_row, k = (c % chunks_per_row) * 8;
    const int64_t row = tile_index * ROWS + r;
    const bool valid = row < p.rows;
    cp_async_16(tile + r * p.tile_stride + k, src + (valid ? row * in + k : 0), valid ? 16 : 0);
  }
}

// One warp carries MT x 16 rows through every layer. Layer outputs stay in registers: the fp32
// accumulator fragment of an m16n8 tile pair is, once packed to 16 bits, exactly the A fragment
// of the next layer's m16n8k16 MMA, so activations never go back to shared memory. Each weight
// fragment read from shared memory serves all MT row tiles.
template <typename T, int WMAX, int MT, Activation A>
__global__ void __launch_bounds__(kFusedMaxWarps * 32)
    fully_fused_mlp_kernel(const __grid_constant__ FusedParams p) {
  constexpr int ROWS = 16 * MT;
  constexpr int KT = WMAX / 16;  // k16 steps of the widest layer
  constexpr int NT = WMAX / 8;   // n8 tiles of the widest layer
  const auto act = [](float v) { return act_fast<A>(v); };
  extern __shared__ __align__(16) uint8_t smem[];
  T* weights = reinterpret_cast<T*>(smem);
  float* biases = reinterpret_cast<float*>(smem + p.weight_elems * sizeof(T));
  T* tiles = reinterpret_cast<T*>(smem + p.weight_elems * sizeof(T) + p.bias_floats * 4);

  // Every layer's weights into shared memory once (16-byte copies), biases as fp32.
  for (int l = 0; l < p.layers; ++l) {
    const int in = p.widths[l], out = p.widths[l + 1];
    const T* w = static_cast<const T*>(p.weights[l]);
    for (int c = threadIdx.x; c < out * in / 8; c += blockDim.x) {
      const int n = c / (in / 8), k = (c % (in / 8)) * 8;
      cp_async_16(weights + p.weight_offset[l] + n * (in + kFusedRowPad) + k, w + n * in + k, 16);
    }
    const T* b = static_cast<const T*>(p.biases[l]);
    for (int n = threadIdx.x; n < out; n += blockDim.x)
      biases[p.bias_offset[l] + n] = b ? to_float(b[n]) : 0.f;
  }
  cp_async_commit();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warps = blockDim.x / 32;
  // This warp's two row tiles (pointer arithmetic, not an array: no local memory).
  const int tile_elems = ROWS * p.tile_stride;
  T* const mine = tiles + 2 * warp * tile_elems;
  const int64_t tiles_total = (p.rows + ROWS - 1) / ROWS;
  const int64_t step = int64_t{gridDim.x} * warps;
  int64_t tile = int64_t{blockIdx.x} * warps + warp;
  if (tile < tiles_total) prefetch_rows<T, ROWS>(p, mine, tile, lane);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();  // weights visible to every warp

  int cur = 0;
  const int out_w = p.widths[p.layers];
  T* dst = static_cast<T*>(p.output);
  const int g = lane / 4, cpair = 2 * (lane % 4);
  for (; tile < tiles_total; tile += step, cur ^= 1) {
    // Fetch the next tile while this one is computed.
    if (tile + step < tiles_total)
      prefetch_rows<T, ROWS>(p, mine + (cur ^ 1) * tile_elems, tile + step, lane);
    cp_async_commit();
    cp_async_wait<1>();
    __syncwarp();
    T* x = mine + cur * tile_elems;

    // Layer 0's A fragments from the input tile.
    uint32_t a[MT][KT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int kt = 0; kt < KT; ++kt)
        if (kt * 16 < p.widths[0])
          ldmatrix_x4(a[mt][kt],
                      x + (mt * 16 + lane % 16) * p.tile_stride + kt * 16 + (lane / 16) * 8);

    for (int l = 0; l < p.layers; ++l) {
      const int in = p.widths[l], out = p.widths[l + 1];
      const T* w = weights + p.weight_offset[l];
      const int wstride = in + kFusedRowPad;
      float acc[MT][NT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
          acc[mt][nt][0] = acc[mt][nt][1] = acc[mt][nt][2] = acc[mt][nt][3] = 0.f;
#pragma unroll
      for (int np = 0; np < NT / 2; ++np) {  // pairs of n8 tiles
        if (np * 16 >= out) break;
#pragma unroll
        for (int kt = 0; kt < KT; ++kt) {
          if (kt * 16 >= in) break;
          uint32_t b[4];
          const int n = np * 16 + (lane % 8) + (lane / 16) * 8;
          const int k = kt * 16 + ((lane / 8) % 2) * 8;
          ldmatrix_x4(b, w + n * wstride + k);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            mma_16816<T>(acc[mt][2 * np], a[mt][kt], b[0], b[1]);
            mma_16816<T>(acc[mt][2 * np + 1], a[mt][kt], b[2], b[3]);
          }
        }
      }

      const float* bias = biases + p.bias_offset[l];
      if (l + 1 < p.layers) {
        // Bias and activation, then repack as the next layer's A fragments.
#pragma unroll
        for (int kt = 0; kt < KT; ++kt) {
          if (kt * 16 >= out) break;
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const int nt = 2 * kt + half;
            const float b0 = bias[nt * 8 + cpair], b1 = bias[nt * 8 + cpair + 1];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
              const float* c = acc[mt][nt];
              a[mt][kt][2 * half] = pack2_act<T, A>(c[0] + b0, c[1] + b1, act);
              a[mt][kt][2 * half + 1] = pack2_act<T, A>(c[2] + b0, c[3] + b1, act);
            }
          }
        }
      } else {
        // Last layer: bias (and the activation when this kernel is a segment of a longer MLP),
        // staged in the input tile (read long ago) for coalesced stores.
        __syncwarp();
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          if (nt * 8 >= out) break;
          const int col = nt * 8 + cpair;
          const float b0 = bias[col], b1 = bias[col + 1];
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            const int r = mt * 16 + g;
            const float* c = acc[mt][nt];
            *reinterpret_cast<uint32_t*>(x + r * p.tile_stride + col) =
                p.act_out ? pack2_act<T, A>(c[0] + b0, c[1] + b1, act)
                          : pack2<T>(c[0] + b0, c[1] + b1);
            *reinterpret_cast<uint32_t*>(x + (r + 8) * p.tile_stride + col) =
                p.act_out ? pack2_act<T, A>(c[2] + b0, c[3] + b1, act)
                          : pack2<T>(c[2] + b0, c[3] + b1);
          }
        }
      }
    }
    __syncwarp();

    // The ROWS output rows are one contiguous block of device memory: coalesced 16-byte stores.
    const int chunks_per_row = out_w / 8;
    for (int c = lane; c < ROWS * chunks_per_row; c += 32) {
      const int r = c / chunks_per_row, k = (c % chunks_per_row) * 8;
      const int64_t row = tile * ROWS + r;
      if (row < p.rows)
        *reinterpret_cast<uint4*>(dst + row * out_w + k) =
            *reinterpret_cast<const uint4*>(x + r * p.tile_stride + k);
    }
    __syncwarp();  // reads of this buffer end before it is refilled
  }
  cp_async_wait<0>();
}

template <typename T, int WMAX>
void* kernel_for(Activation act) {
  void* f = nullptr;
  dispatch_activation(act, [&]<Activation A>() {
    f = reinterpret_cast<void*>(
        &fully_fused_mlp_kernel<T, WMAX, fused_rows_per_warp(WMAX) / 16, A>);
  });
  return f;
}

void* select_kernel(DType dtype, int wmax, Activation act) {
  void* f = nullptr;
  dispatch_dtype(dtype, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, float>) {
      if (wmax <= 32) {
        f = kernel_for<T, 32>(act);
      } else if (wmax <= 64) {
        f = kernel_for<T, 64>(act);
      } else {
        f = kernel_for<T, 128>(act);
      }
    }
  });
  if (!f) throw CudaError("fully-fused: no kernel for this dtype");
  return f;
}

}  // namespace

FullyFusedMlp::FullyFusedMlp(const MlpConfig& c, std::vector<const void*> weights,
                             std::vector<const void*> biases, int device,
                             std::vector<void*> scratch, bool activate_output)
    : config_(c),
      weights_(std::move(weights)),
      biases_(std::move(biases)),
      act_out_(activate_output),
      scratch_(std::move(scratch)) {
  if (static_cast<int>(weights_.size()) > kFusedMaxLayers)
    throw CudaError("fully-fused: at most " + std::to_string(kFusedMaxLayers) + " layers");
  const auto segments = fused_segments(c);
  if (segments.empty())
    throw CudaError("fully-fused: a layer's weights alone exceed a block's shared memory");
  if (segments.size() > 1) {
    if (scratch_.empty() || (segments.size() > 2 && scratch_.size() < 2))
      throw CudaError("fully-fused: the layers take several kernels and no buffer between them");
    for (size_t i = 0; i < segments.size(); ++i) {
      const FusedSegment& s = segments[i];
      const auto first = static_cast<std::ptrdiff_t>(s.first);
      const auto last = static_cast<std::ptrdiff_t>(s.last);
      std::vector<const void*> w(weights_.begin() + first, weights_.begin() + last);
      std::vector<const void*> b;
      if (!biases_.empty()) b.assign(biases_.begin() + first, biases_.begin() + last);
      const bool last_segment = i + 1 == segments.size();
      segments_.push_back(std::make_unique<FullyFusedMlp>(fused_segment_config(c, s), w, b, device,
                                                          std::vector<void*>{},
                                                          !last_segment || act_out_));
    }
    return;
  }
  if (FusedMlpSm90::applies(c, device)) {
    sm90_ = std::make_unique<FusedMlpSm90>(c, weights_, biases_, device, act_out_);
    return;
  }
  int widest = 0;
  for (auto w : c.widths) widest = std::max(widest, static_cast<int>(w));
  wmax_ = widest <= 32 ? 32 : widest <= 64 ? 64 : 128;
  int optin = 0, sms = 0;
  FS_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  FS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // Warps per block: the count that puts the most warps on an SM (shared memory decides).
  void* f = select_kernel(c.dtype, wmax_, c.activation);
  const size_t smallest = fused_smem_bytes(c, kFusedMinWarps);
  if (smallest > static_cast<size_t>(optin))
    throw CudaError("fully-fused: needs " + std::to_string(smallest >> 10) +
                    " KiB of shared memory per block; this device allows " +
                    std::to_string(optin >> 10) + " KiB");
  FS_CUDA(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  int best_per_sm = 0;
  for (int w = kFusedMaxWarps; w >= kFusedMinWarps; w -= 2) {  // ties keep the larger block
    const size_t smem = fused_smem_bytes(c, w);
    if (smem > static_cast<size_t>(optin)) continue;
    int blocks_per_sm = 0;
    FS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, f, w * 32, smem));
    if (blocks_per_sm * w > best_per_sm) {
      best_per_sm = blocks_per_sm * w;
      warps_ = w;
      smem_ = smem;
    }
  }
  if (best_per_sm == 0) throw CudaError("fully-fused: no block size fits on this device");
  const int per_sm = best_per_sm / warps_;
  const int64_t tiles = (c.rows + fused_rows_per_warp(widest) - 1) / fused_rows_per_warp(widest);
  const int64_t wanted = (tiles + warps_ - 1) / warps_;
  blocks_ = static_cast<int>(std::min<int64_t>(wanted, int64_t{std::max(per_sm, 1)} * sms));
}

FullyFusedMlp::~FullyFusedMlp() = default;

void FullyFusedMlp::run_kernel(size_t i, const void* input, void* output,
                               cudaStream_t stream) const {
  if (segments_.empty()) {
    run(input, output, stream);
    return;
  }
  const void* in = i == 0 ? input : scratch_[(i - 1) % scratch_.size()];
  void* out = i + 1 == segments_.size() ? output : scratch_[i % scratch_.size()];
  segments_.at(i)->run(in, out, stream);
}

std::string FullyFusedMlp::describe() const {
  if (!segments_.empty()) {
    const auto layers = fused_segments(config_);
    std::string s = std::to_string(segments_.size()) +
                    " fully fused kernels (the weights do not fit in one block's shared memory), "
                    "activations between them in device memory:";
    for (size_t i = 0; i < segments_.size(); ++i)
      s += (i ? "; layers " : " layers ") + std::to_string(layers[i].first + 1) + "-" +
           std::to_string(layers[i].last) + ": " + segments_[i]->describe();
    return s;
  }
  if (sm90_) return sm90_->describe();
  return "fully fused MLP: mma.sync, " + std::to_string(warps_) + " warps x " +
         std::to_string(blocks_) + " blocks";
}

void FullyFusedMlp::run(const void* input, void* output, cudaStream_t stream) const {
  if (!segments_.empty()) {
    for (size_t i = 0; i < segments_.size(); ++i) run_kernel(i, input, output, stream);
    return;
  }
  if (sm90_) {
    sm90_->run(input, output, stream);
    return;
  }
  FusedParams p{};
  p.input = input;
  p.output = output;
  p.rows = config_.rows;
  p.layers = static_cast<int>(weights_.size());
  int woff = 0, boff = 0, widest = 0;
  for (int l = 0; l <= p.layers; ++l) {
    p.widths[l] = static_cast<int>(config_.widths[l]);
    widest = std::max(widest, p.widths[l]);
  }
  for (int l = 0; l < p.layers; ++l) {
    p.weights[l] = weights_[l];
    p.biases[l] = biases_.empty() ? nullptr : biases_[l];
    p.weight_offset[l] = woff;
    p.bias_offset[l] = boff;
    woff += p.widths[l + 1] * (p.widths[l] + kFusedRowPad);
    boff += p.widths[l + 1];
  }
  p.weight_elems = woff;
  p.bias_floats = boff;
  p.tile_stride = widest + kFusedRowPad;
  p.act_out = act_out_ ? 1 : 0;
  void* f = select_kernel(config_.dtype, wmax_, config_.activation);
  void* args[] = {&p};
  FS_CUDA(cudaLaunchKernel(f, dim3(blocks_), dim3(warps_ * 32), args, smem_, stream));
}

}  // namespace fusionscope::kernels::detail
