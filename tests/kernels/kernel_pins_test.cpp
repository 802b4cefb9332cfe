// Pinned set-up choices (kernel_pins.h): the text a run writes is the text a run takes.
#include "kernel_pins.h"

#include <gtest/gtest.h>

#include "fusionscope/kernels/config.h"

namespace fd = fusionscope::kernels::detail;
using fusionscope::kernels::ConfigError;

namespace {

bool same(const fd::HopperGemmConfig& a, const fd::HopperGemmConfig& b) {
  return a.schedule == b.schedule && a.cluster == b.cluster && a.group_m == b.group_m &&
         a.cluster_n == b.cluster_n && a.raster_n == b.raster_n && a.hint_a == b.hint_a &&
         a.hint_b == b.hint_b && a.stagger == b.stagger && a.k_serpentine == b.k_serpentine &&
         a.tile_n == b.tile_n && a.tile_m == b.tile_m && a.dynamic_tiles == b.dynamic_tiles &&
         a.split_tail == b.split_tail;
}

TEST(KernelPins, EveryConfigurationReadsBackAsItself) {
  for (const char* text :
       {"coop:2:16", "coop:1:8", "pp:2:16", "pp:1:4", "coop:2x2:16", "coop:2:16:n:nn:0",
        "coop:1:16:m:fl:2", "pp:2x2:3:n:ln:0", "coop:2:8:ms:nn:0", "pp:1:16:ns",
        "coop128:2:8:ms:ln:0", "coop192:1:4:ns", "coop:1:8:msd:ln:0", "coop128:1:16:nd",
        "coop:2:8:msk:ln:0", "coop:1:4:nk", "coop192x192:2:8:ms:ln:0", "coop192x192:1:4:msd"}) {
    const fd::HopperGemmConfig c = fd::parse_hopper_config(text);
    EXPECT_TRUE(same(fd::parse_hopper_config(fd::hopper_config_text(c)), c)) << text;
  }
  EXPECT_EQ(fd::hopper_config_text(fd::parse_hopper_config("coop:2x1:16")), "coop:2:16");
  EXPECT_EQ(fd::hopper_config_text(fd::parse_hopper_config("coop256:2:16")), "coop:2:16");
  EXPECT_EQ(fd::parse_hopper_config("coop192:2:8").tile_n, 192);
  EXPECT_EQ(fd::parse_kernel_pins("gated=coop192:2:8:ms:ln:0").gated->tile_n, 192);
  EXPECT_EQ(fd::parse_hopper_config("coop:2:8").tile_n, 256);
  EXPECT_EQ(fd::parse_hopper_config("coop:2:8").tile_m, 128);
  const fd::HopperGemmConfig big = fd::parse_hopper_config("coop192x192:2:8:ms:ln");
  EXPECT_EQ(big.tile_m, 192);
  EXPECT_EQ(big.tile_n, 192);
  EXPECT_EQ(fd::hopper_config_text(big), "coop192x192:2:8:ms:ln:0");
  EXPECT_EQ(fd::hopper_config_text(fd::parse_hopper_config("coop128x192:2:8")), "coop192:2:8");
  const fd::HopperGemmConfig c = fd::parse_hopper_config("pp:1x2:8:n:fl:3");
  EXPECT_EQ(c.schedule, fd::HopperSchedule::kPingPong);
  EXPECT_EQ(c.cluster, 1);
  EXPECT_EQ(c.cluster_n, 2);
  EXPECT_EQ(c.group_m, 8);
  EXPECT_TRUE(c.raster_n);
  EXPECT_EQ(c.hint_a, fd::L2Hint::kEvictFirst);
  EXPECT_EQ(c.hint_b, fd::L2Hint::kEvictLast);
  EXPECT_EQ(c.stagger, 3);
  EXPECT_FALSE(c.k_serpentine);
  const fd::HopperGemmConfig s = fd::parse_hopper_config("coop:2:8:ms");
  EXPECT_TRUE(s.k_serpentine);
  EXPECT_FALSE(s.raster_n);
  EXPECT_EQ(fd::hopper_config_text(s), "coop:2:8:ms:nn:0");
  EXPECT_FALSE(s.dynamic_tiles);
  const fd::HopperGemmConfig d = fd::parse_hopper_config("coop:1:8:msd");
  EXPECT_TRUE(d.dynamic_tiles && d.k_serpentine && !d.raster_n);
  EXPECT_EQ(fd::hopper_config_text(d), "coop:1:8:msd:nn:0");
  const fd::HopperGemmConfig k = fd::parse_hopper_config("coop:2:8:msk:ln");
  EXPECT_TRUE(k.split_tail && k.k_serpentine && !k.dynamic_tiles);
  EXPECT_EQ(fd::hopper_config_text(k), "coop:2:8:msk:ln:0");
  EXPECT_THROW(fd::parse_hopper_config("coop:1:8:mskd"), ConfigError);
  EXPECT_THROW(fd::parse_hopper_config("coop:1:8:d"), ConfigError);
  EXPECT_THROW(fd::parse_hopper_config("coop:1:8:mds"), ConfigError);
}

TEST(KernelPins, ARunsChoicesReadBackAsThemselves) {
  const fd::KernelPins pins = fd::parse_kernel_pins("gated=coop:2:16 down=cublaslt");
  ASSERT_TRUE(pins.gated && pins.down);
  EXPECT_TRUE(pins.down->cublaslt);
  EXPECT_EQ(fd::kernel_pins_text(pins), "gated=coop:2:16 down=cublaslt");
  const fd::KernelPins ours = fd::parse_kernel_pins("  down=pp:1:16   gated=coop:1:8 ");
  ASSERT_TRUE(ours.down);
  EXPECT_FALSE(ours.down->cublaslt);
  EXPECT_EQ(ours.down->config.schedule, fd::HopperSchedule::kPingPong);
  EXPECT_EQ(fd::kernel_pins_text(ours), "gated=coop:1:8 down=pp:1:16");
  EXPECT_TRUE(fd::parse_kernel_pins("").empty());
  EXPECT_EQ(fd::kernel_pins_text({}), "");
}

TEST(KernelPins, BadTextIsAConfigurationErrorThatSaysWhy) {
  for (const char* text : {"gated=",
                           "gated=coop:2",
                           "gated=warp:2:16",
                           "gated=coop:3:16",
                           "gated=coop:2:0",
                           "gated=coop:2:16:x",
                           "gated=coop:2:16:mz",
                           "gated=coop:2:16:sm",
                           "gated=coop:2:16:m:nq",
                           "gated=coop:2:16:m:nn:-1",
                           "gated=coop:2:16:m:nn:1:9",
                           "gated=coop:2:1e3",
                           "down=lt",
                           "up=coop:2:16",
                           "gated",
                           "gated=coop64:2:16",
                           "gated=coop1922:2:16",
                           "gated=pp128:2:16",
                           "gated=coopx:2:16",
                           "gated=coop192x256:2:8",
                           "gated=coop256x192:2:8",
                           "gated=coop192x192x192:2:8",
                           "gated=coop192x:2:8"}) {
    try {
      fd::parse_kernel_pins(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("kernel pin"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
