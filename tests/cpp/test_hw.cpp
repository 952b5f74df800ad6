// HardwareModel presets, peaks, JSON overrides and the no-GPU paths.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tilegemm/errors.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm {
namespace {

// Seed tolerance: 0.5% unless a number is exact.
void expect_near_rel(double actual, double expected, double rel = 0.005) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * rel) << "expected " << expected << ", got " << actual;
}

TEST(HwPresets, EveryNamedPresetLoadsAndHasPositivePeaks) {
  for (const auto& name : hardware_preset_names()) {
    const HardwareModel hw = hardware_preset(name);
    EXPECT_EQ(hw.name, name);
    EXPECT_GT(hw.num_sms, 0) << name;
    EXPECT_GT(hw.hbm_gbps, 0) << name;
    EXPECT_GT(hw.peak_flops(DType::kBFloat16), 0) << name;
    EXPECT_GT(hw.peak_flops(DType::kFloat8E4M3), 0) << name;
    EXPECT_GT(hw.smem_per_block_bytes, 0) << name;
  }
  EXPECT_EQ(hardware_preset_names().size(), 5u);
}

TEST(HwPresets, H100SxmMatchesTheDatasheet) {
  const HardwareModel hw = hardware_preset("h100-sxm");
  EXPECT_EQ(hw.num_sms, 132);
  expect_near_rel(hw.peak_flops(DType::kBFloat16), 989.4e12);
  expect_near_rel(hw.peak_flops(DType::kFloat16), 989.4e12);
  expect_near_rel(hw.peak_flops(DType::kFloat8E4M3), 1978.9e12);
  expect_near_rel(hw.peak_flops(DType::kInt8), 1978.9e12);
  expect_near_rel(hw.peak_flops(DType::kTFloat32), 494.7e12);
  EXPECT_EQ(hw.smem_per_block_bytes, 232448);
  EXPECT_EQ(hw.smem_per_sm_bytes, 228 * 1024);
  EXPECT_EQ(hw.regs_per_sm, 65536);
  EXPECT_EQ(hw.reg_alloc_granularity * 32, 256);  // 256 registers per warp
  EXPECT_EQ(hw.max_threads_per_sm, 2048);
  EXPECT_DOUBLE_EQ(hw.hbm_gbps, 3350);
  // Hopper has no fp4/int4 tensor path: asking is an error naming the dtype, not a zero peak.
  try {
    hw.peak_flops(DType::kFloat4E2M1);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "math dtype");
    EXPECT_NE(std::string(e.what()).find("fp4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(hw.peak_flops(DType::kInt4), InvalidArgument);
  EXPECT_THROW(hw.peak_flops(DType::kInt32), InvalidArgument);
}

TEST(HwPresets, H800H200AndH20DifferWhereTheDatasheetsDo) {
  const HardwareModel h100 = hardware_preset("h100-sxm");
  const HardwareModel h800 = hardware_preset("h800");
  const HardwareModel h200 = hardware_preset("h200");
  const HardwareModel h20 = hardware_preset("h20");
  EXPECT_DOUBLE_EQ(h800.peak_flops(DType::kBFloat16), h100.peak_flops(DType::kBFloat16));
  EXPECT_DOUBLE_EQ(h800.hbm_gbps, 3350);
  EXPECT_DOUBLE_EQ(h200.peak_flops(DType::kBFloat16), h100.peak_flops(DType::kBFloat16));
  EXPECT_DOUBLE_EQ(h200.hbm_gbps, 4800);
  EXPECT_DOUBLE_EQ(h200.l2_bytes, 60.0 * 1024 * 1024);
  EXPECT_EQ(h20.num_sms, 78);
  expect_near_rel(h20.peak_flops(DType::kBFloat16), 148e12);
  expect_near_rel(h20.peak_flops(DType::kFloat8E4M3), 296e12);
  EXPECT_DOUBLE_EQ(h20.hbm_gbps, 4000);
}

TEST(HwPresets, Ascend950DtPeaksMatchSeed004) {
  const HardwareModel hw = hardware_preset("ascend-950dt");
  EXPECT_EQ(hw.num_sms, 32);
  EXPECT_DOUBLE_EQ(hw.sm_clock_mhz, 1650);
  EXPECT_DOUBLE_EQ(hw.flop_per_cycle_bf16, 8192);
  // 432.5 / 865.0 / 1730.1 TFLOP/s (seed 004 §5.1), FLOP/cycle scaling as 16/bits.
  expect_near_rel(hw.peak_flops(DType::kBFloat16), 432.5e12);
  expect_near_rel(hw.peak_flops(DType::kFloat8E4M3), 865.0e12);
  expect_near_rel(hw.peak_flops(DType::kFloat4E2M1), 1730.1e12);
  EXPECT_DOUBLE_EQ(hw.peak_flops(DType::kInt4), hw.peak_flops(DType::kFloat4E2M1));
  EXPECT_DOUBLE_EQ(hw.peak_flops(DType::kTFloat32) * 2, hw.peak_flops(DType::kBFloat16));
  EXPECT_DOUBLE_EQ(hw.hbm_gbps, 3500);
  EXPECT_EQ(hw.ascend_l0c_bytes, 256 * 1024);
  EXPECT_EQ(hw.ascend_l1_bytes, 512 * 1024);
  EXPECT_EQ(hw.ascend_l0a_bytes, 64 * 1024);
  EXPECT_EQ(hw.ascend_l0b_bytes, 64 * 1024);
}

TEST(HwPresets, UnknownPresetNamesTheArgumentAndListsThePresets) {
  try {
    hardware_preset("b200", "--hw");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "--hw");
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'b200'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("h100-sxm"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ascend-950dt"), std::string::npos) << msg;
  }
}

TEST(HwOverrides, JsonOverridesFieldsAndRoundTrips) {
  HardwareModel hw = hardware_preset("h200");
  apply_hardware_overrides_json(hw, R"({"hbm_gbps": 4272, "num_sms": 114, "name": "h200-measured"})");
  EXPECT_DOUBLE_EQ(hw.hbm_gbps, 4272);
  EXPECT_EQ(hw.num_sms, 114);
  EXPECT_EQ(hw.name, "h200-measured");

  // Every field the printer writes is accepted back, unchanged.
  const HardwareModel ascend = hardware_preset("ascend-950dt");
  HardwareModel copy;
  apply_hardware_overrides_json(copy, hardware_to_json(ascend));
  EXPECT_EQ(hardware_to_json(copy), hardware_to_json(ascend));
  EXPECT_DOUBLE_EQ(copy.peak_flops(DType::kFloat8E4M3), ascend.peak_flops(DType::kFloat8E4M3));
  EXPECT_EQ(copy.ascend_l0c_bytes, ascend.ascend_l0c_bytes);
}

void expect_json_error(const std::string& text, const std::string& fragment) {
  HardwareModel hw = hardware_preset("h200");
  const std::string before = hardware_to_json(hw);
  try {
    apply_hardware_overrides_json(hw, text, "--hw-json");
    FAIL() << "expected InvalidArgument for " << text;
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument().rfind("--hw-json", 0), 0u) << e.argument();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
  EXPECT_EQ(hardware_to_json(hw), before) << "a rejected override must leave the model untouched";
}

TEST(HwOverrides, BadJsonIsRejectedWithAClearMessage) {
  expect_json_error(R"({"hbm_gbps": 4272,)", "malformed JSON");
  expect_json_error("[1, 2]", "a JSON array");
  expect_json_error(R"({"hbm_gbps": 1, "hbm_bandwidth": 4272})", "unknown key 'hbm_bandwidth'");
  expect_json_error(R"({"hbm_gbps": "fast"})", "a number");
  expect_json_error(R"({"num_sms": 13.5})", "an integer");
  expect_json_error(R"({"num_sms": -1})", "> 0");
  expect_json_error(R"({"num_sms": 0})", "> 0");
  expect_json_error(R"({"flop_per_cycle_fp4": -1})", ">= 0");
  expect_json_error(R"({"hbm_gbps": 1e400})", "outside double's range");
  expect_json_error(R"({"name": 3})", "a string");
}

TEST(HwDevice, NoGpuMeansFalseAndACleanErrorNotACrash) {
  if (gpu_available()) {
    const HardwareModel hw = hardware_from_device(0);
    EXPECT_GT(hw.num_sms, 0);
    EXPECT_GT(hw.hbm_gbps, 0);
    EXPECT_GT(hw.smem_per_block_bytes, 0);
    EXPECT_THROW(hardware_from_device(1 << 20), InvalidArgument);
    return;
  }
  EXPECT_FALSE(gpu_available());
  EXPECT_THROW(hardware_from_device(0), RuntimeError);
  EXPECT_FALSE(gpu_available()) << "a failed query must not leave a sticky error behind";
}

}  // namespace
}  // namespace tilegemm
