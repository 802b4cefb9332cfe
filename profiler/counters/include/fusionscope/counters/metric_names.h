// Names of the metrics the counters passes store, as they appear in a session (KernelMetricRecord
// and SampleRecord names). Header-only and free of CUPTI, so analysis and the views can name them
// without linking the counters library. Raw metrics keep Nsight Compute's spelling; derived ones
// are prefixed "fusionscope/". docs/counters.md explains each one.
#pragma once

#include <string_view>

namespace fusionscope::counters::metric {

// Per kernel, read with the CUPTI range profiler.
inline constexpr std::string_view kDuration = "gpu__time_duration.sum";  // ns
inline constexpr std::string_view kDramRead = "dram__bytes_read.sum";    // byte
inline constexpr std::string_view kDramWrite = "dram__bytes_write.sum";  // byte
inline constexpr std::string_view kL2Bytes = "lts__t_bytes.sum";         // byte
// 32-byte sectors written into the L2: every byte the kernel wrote (dirtied), whether or not it
// reached DRAM before the kernel ended. Stored as is; fusionscope/l2_write_bytes is it in bytes.
inline constexpr std::string_view kL2WriteSectors = "lts__t_sectors_op_write.sum";
inline constexpr std::string_view kL1Bytes = "l1tex__t_bytes.sum";  // byte
inline constexpr std::string_view kDramThroughputPct =
    "dram__throughput.avg.pct_of_peak_sustained_elapsed";  // percent
inline constexpr std::string_view kSmActivePct =
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";  // percent of cycles with a warp
                                                            // resident
inline constexpr std::string_view kSmIssuePct =
    "sm__inst_executed.avg.pct_of_peak_sustained_active";  // percent of peak instruction issue
inline constexpr std::string_view kTensorActivePct =
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed";  // percent, any tensor op
inline constexpr std::string_view kTensorHmmaActivePct =
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed";  // HMMA/HGMMA
inline constexpr std::string_view kTensorOpsBf16 = "sm__ops_path_tensor_src_bf16_dst_fp32.sum";
inline constexpr std::string_view kTensorOpsFp16 = "sm__ops_path_tensor_src_fp16.sum";
inline constexpr std::string_view kTensorOpsTf32 = "sm__ops_path_tensor_src_tf32_dst_fp32.sum";
inline constexpr std::string_view kFfma = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum";
inline constexpr std::string_view kFadd = "sm__sass_thread_inst_executed_op_fadd_pred_on.sum";
inline constexpr std::string_view kFmul = "sm__sass_thread_inst_executed_op_fmul_pred_on.sum";

// Per kernel, derived from the raw values above (see derive_kernel_metrics()).
inline constexpr std::string_view kDramBytes = "fusionscope/dram_bytes";          // read + write
inline constexpr std::string_view kL2WriteBytes = "fusionscope/l2_write_bytes";   // byte dirtied
inline constexpr std::string_view kTensorFlops = "fusionscope/tensor_flops";      // flop
inline constexpr std::string_view kFp32Flops = "fusionscope/fp32_flops";          // flop
inline constexpr std::string_view kFlops = "fusionscope/flops";                   // tensor + fp32
inline constexpr std::string_view kDramBandwidth = "fusionscope/dram_bandwidth";  // byte/second
inline constexpr std::string_view kFlopRate = "fusionscope/flop_rate";            // flop/second
inline constexpr std::string_view kArithmeticIntensity =
    "fusionscope/arithmetic_intensity";  // flop/byte of DRAM traffic

// Over time, read with CUPTI PM sampling (SampleRecord series).
inline constexpr std::string_view kSampleDramRead = "dram__bytes_read.sum.per_second";
inline constexpr std::string_view kSampleDramWrite = "dram__bytes_write.sum.per_second";
inline constexpr std::string_view kSampleDramThroughputPct =  // available, not sampled by default
    "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kSampleSmActivePct =
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kSampleTensorActivePct =
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed";
// Derived per sample: read + write, byte/second.
inline constexpr std::string_view kSampleDramBandwidth = "fusionscope/dram_bandwidth";

}  // namespace fusionscope::counters::metric
