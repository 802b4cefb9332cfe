// Sweeps and the lab's form, without a GPU: which points a sweep visits, what configuration each
// point is, how a sweep is kept in a session's properties; the form <-> configuration round trip.
#include <gtest/gtest.h>

#include "fusionscope/lab/lab_form.h"
#include "fusionscope/lab/sweep.h"
#include "test_paths.h"

namespace fusionscope::lab {
namespace {

using kernels::ConfigError;
using kernels::Variant;
using V = std::vector<int64_t>;

SweepSpec spec(SweepSize size, int64_t from, int64_t to, int steps = 0) {
  SweepSpec s;
  s.size = size;
  s.from = from;
  s.to = to;
  s.steps = steps;
  return s;
}

TEST(SweepPoints, DoublingFromTo) {
  EXPECT_EQ(sweep_points(spec(SweepSize::kHidden, 256, 8192)),
            (V{256, 512, 1024, 2048, 4096, 8192}));
  // Doubling that misses the end still ends there.
  EXPECT_EQ(sweep_points(spec(SweepSize::kHidden, 256, 6000)),
            (V{256, 512, 1024, 2048, 4096, 6000}));
  EXPECT_EQ(sweep_points(spec(SweepSize::kRows, 1000, 1000)), (V{1000}));
}

TEST(SweepPoints, NPointsEvenOnALogScaleWidthsRoundedToEight) {
  EXPECT_EQ(sweep_points(spec(SweepSize::kHidden, 256, 8192, 4)), (V{256, 816, 2584, 8192}));
  EXPECT_EQ(sweep_points(spec(SweepSize::kRows, 1000, 8000, 3)), (V{1000, 2828, 8000}));
  // Points that round to the same width are kept once.
  EXPECT_EQ(sweep_points(spec(SweepSize::kIn, 8, 16, 5)), (V{8, 16}));
}

TEST(SweepPoints, BadRangesAreRefusedWithAReason) {
  auto refused = [](const SweepSpec& s, const std::string& words) {
    try {
      sweep_points(s);
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      return true;
    }
    return false;
  };
  EXPECT_TRUE(refused(spec(SweepSize::kHidden, 0, 8192), "positive"));
  EXPECT_TRUE(refused(spec(SweepSize::kHidden, 8192, 256), "must go up"));
  EXPECT_TRUE(refused(spec(SweepSize::kHidden, 256, 5004), "multiples of 8"));
  EXPECT_TRUE(refused(spec(SweepSize::kRows, 1, int64_t{1} << 40), "more than 32"));
  EXPECT_TRUE(refused(spec(SweepSize::kRows, 1, 100, 1), "at least 2 points"));
  EXPECT_TRUE(refused(spec(SweepSize::kRows, 1, 100, 33), "too long"));
}

TEST(SweepSizes, EachPointIsTheBaseWithOneSizeChanged) {
  const auto geglu = *kernels::find_preset("geglu-post");
  const auto c = with_size(geglu, SweepSize::kHidden, 1024);
  EXPECT_EQ(c.widths, (V{768, 1024}));
  EXPECT_EQ(c.name, "geglu-post hidden=1024");
  EXPECT_EQ(with_size(geglu, SweepSize::kRows, 512).rows, 512);
  EXPECT_EQ(with_size(geglu, SweepSize::kIn, 1024).widths, (V{1024, 3072}));
  const auto wide = *kernels::find_preset("mlp-wide");
  EXPECT_EQ(with_size(wide, SweepSize::kHidden, 2048).widths, (V{1024, 2048, 2048, 1024}));
  EXPECT_EQ(with_size(wide, SweepSize::kOut, 512).widths, (V{1024, 4096, 4096, 512}));
  const auto linear = *kernels::find_preset("linear-post");
  EXPECT_THROW(with_size(linear, SweepSize::kHidden, 64), ConfigError);
  EXPECT_THROW(with_size(geglu, SweepSize::kOut, 64), ConfigError);
}

TEST(SweepPlan, PointByPointInEveryVariantThatApplies) {
  const auto geglu = *kernels::find_preset("geglu-post");
  const SweepPlan plan =
      plan_sweep(geglu, {Variant::kEager, Variant::kGatedGemm, Variant::kFullyFused},
                 spec(SweepSize::kHidden, 1024, 4096));
  ASSERT_EQ(plan.runs.size(), 6u);  // 3 points x 2 variants; fully-fused does not apply
  EXPECT_EQ(plan.skipped.size(), 3u);
  EXPECT_EQ(plan.point_of_run, (std::vector<size_t>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(run_name(plan.runs[2]), "geglu-post hidden=2048 / eager");
  EXPECT_EQ(plan.runs[3].variant, Variant::kGatedGemm);
  ASSERT_EQ(plan.record.points.size(), 3u);
  EXPECT_EQ(plan.record.points[2].value, 4096);
  EXPECT_TRUE(plan.record.points[0].runs.empty());
  EXPECT_THROW(plan_sweep(geglu, {Variant::kFullyFused}, spec(SweepSize::kHidden, 1024, 4096)),
               ConfigError);
  EXPECT_THROW(plan_sweep(geglu, {Variant::kEager}, spec(SweepSize::kHidden, 1024, 4004)),
               ConfigError);
}

TEST(SweepRecord, RoundTripsThroughJsonAndTheSessionsProperties) {
  const auto geglu = *kernels::find_preset("geglu-post");
  SweepPlan plan =
      plan_sweep(geglu, {Variant::kEager, Variant::kGatedGemm}, spec(SweepSize::kRows, 512, 2048));
  SweepRecord r = plan.record;
  r.key = "lab.sweep.1";
  r.cuda_graph = true;
  r.points[0].runs = {{Variant::kEager, 4}, {Variant::kGatedGemm, 5}};
  r.points[1].runs = {{Variant::kEager, 6}};
  const SweepRecord back = sweep_from_json(to_json(r), r.key);
  EXPECT_EQ(back.spec, r.spec);
  EXPECT_EQ(back.base, r.base);
  EXPECT_EQ(back.variants, r.variants);
  EXPECT_TRUE(back.cuda_graph);
  EXPECT_EQ(back.run_for(0, Variant::kGatedGemm), 5);
  EXPECT_EQ(back.run_for(1, Variant::kGatedGemm), 0);
  EXPECT_EQ(back.run_for(9, Variant::kEager), 0);
  EXPECT_EQ(back.title(), "rows 512 -> 2048 (3 points, doubling) of geglu-post, CUDA graph");

  auto store = storage::SessionStore::create(testing::scratch_dir() / "sweeps.fsdb", {});
  store.set_property("lab.sweep.9", to_json(r));
  store.set_property("lab.sweep.10", to_json(r));
  store.set_property("lab.sweep.bad", "{\"size\": 3}");
  store.set_property("other", "x");
  EXPECT_EQ(next_sweep_key(store.properties()), "lab.sweep.11");
  std::vector<std::string> errors;
  const auto sweeps = load_sweeps(store.properties(), &errors);
  ASSERT_EQ(sweeps.size(), 2u);
  EXPECT_EQ(sweeps[0].key, "lab.sweep.9");  // by number, not by text
  EXPECT_EQ(sweeps[1].key, "lab.sweep.10");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("lab.sweep.bad: ", 0), 0u);
  EXPECT_EQ(next_sweep_key({}), "lab.sweep.1");
  EXPECT_THROW(sweep_from_json("not json"), ConfigError);
}

TEST(LabForm, PresetsRoundTripThroughTheForm) {
  for (const auto& p : kernels::presets()) {
    const LabForm f = form_of(p.config);
    EXPECT_EQ(to_config(f), p.config) << p.name;
  }
  const LabForm narrow = form_of(*kernels::find_preset("mlp-narrow"));
  EXPECT_EQ(narrow.layers, 5);
  EXPECT_EQ(narrow.hidden, 64);
  const LabForm geglu = form_of(*kernels::find_preset("geglu-post"));
  EXPECT_EQ(geglu.in, 768);
  EXPECT_EQ(geglu.out, 768);
  EXPECT_EQ(geglu.hidden, 3072);
}

TEST(LabForm, SizesTheKindDoesNotUseAreIgnoredAndLayersAreBounded) {
  LabForm f;
  f.kind = kernels::MlpKind::kLinear;
  f.activation = kernels::Activation::kNone;
  f.in = 32;
  f.out = 64;
  f.hidden = 12345;  // not used by a linear layer
  EXPECT_EQ(to_config(f).widths, (V{32, 64}));
  EXPECT_FALSE(uses_hidden(f.kind));
  f.kind = kernels::MlpKind::kMlp;
  f.layers = 1;
  EXPECT_EQ(to_config(f).widths, (V{32, 64}));
  f.layers = 0;
  EXPECT_THROW(to_config(f), ConfigError);
  f.layers = kMaxFormLayers + 1;
  EXPECT_THROW(to_config(f), ConfigError);
  f.kind = kernels::MlpKind::kGated;
  f.hidden = 128;
  EXPECT_EQ(to_config(f).widths, (V{32, 128}));
  EXPECT_FALSE(uses_out(f.kind));
}

}  // namespace
}  // namespace fusionscope::lab
