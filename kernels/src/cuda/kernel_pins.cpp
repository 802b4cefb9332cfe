#include "kernel_pins.h"

#include <charconv>
#include <sstream>
#include <vector>

#include "fusionscope/kernels/config.h"

namespace fusionscope::kernels::detail {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

int small_int(const std::string& s, int lo, int hi, const std::string& what,
              const std::string& text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi)
    throw ConfigError("kernel pin '" + text + "': " + what + " must be a whole number from " +
                      std::to_string(lo) + " to " + std::to_string(hi));
  return v;
}

L2Hint hint(char c, const std::string& text) {
  switch (c) {
    case 'n':
      return L2Hint::kNormal;
    case 'f':
      return L2Hint::kEvictFirst;
    case 'l':
      return L2Hint::kEvictLast;
    default:
      throw ConfigError("kernel pin '" + text + "': L2 hints are n, f or l");
  }
}

char hint_char(L2Hint h) {
  return h == L2Hint::kEvictFirst ? 'f' : h == L2Hint::kEvictLast ? 'l' : 'n';
}

}  // namespace

HopperGemmConfig parse_hopper_config(const std::string& text) {
  const auto f = split(text, ':');
  if (f.size() < 3 || f.size() > 6)
    throw ConfigError("kernel pin '" + text +
                      "': expected SCHEDULE:CLUSTER[xN]:GROUP[:ORDER[:HINTS[:STAGGER]]]");
  HopperGemmConfig c;
  if (f[0] == "pp") {
    c.schedule = HopperSchedule::kPingPong;
  } else if (f[0].starts_with("coop")) {
    c.schedule = HopperSchedule::kCooperative;
    // coop, coopN (128 rows, N wide) or coopMxN
    const auto tile = split(f[0].substr(4), 'x');
    if (tile.size() == 1 && !tile[0].empty())
      c.tile_n = small_int(tile[0], 1, 1 << 16, "the tile width", text);
    if (tile.size() == 2) {
      c.tile_m = small_int(tile[0], 1, 1 << 16, "the tile's rows", text);
      c.tile_n = small_int(tile[1], 1, 1 << 16, "the tile width", text);
    }
    if (tile.size() > 2 || (c.tile_n != 128 && c.tile_n != 160 && c.tile_n != 192 &&
                            c.tile_n != 224 && c.tile_n != 256))
      throw ConfigError("kernel pin '" + text +
                        "': cooperative tiles are 128, 160, 192, 224 or 256 wide");
    if (c.tile_m != 128 && (c.tile_m != 192 || c.tile_n != 192))
      throw ConfigError("kernel pin '" + text + "': cooperative tiles are 128 rows, or 192 x 192");
  } else {
    throw ConfigError("kernel pin '" + text + "': the schedule is coop[WIDTH], coop192x192 or pp");
  }
  const auto sides = split(f[1], 'x');
  if (sides.empty() || sides.size() > 2)
    throw ConfigError("kernel pin '" + text + "': the cluster is M or MxN");
  c.cluster = small_int(sides[0], 1, 2, "the cluster along M", text);
  if (sides.size() > 1) c.cluster_n = small_int(sides[1], 1, 2, "the cluster along N", text);
  c.group_m = small_int(f[2], 1, 1 << 16, "the group", text);
  if (f.size() > 3) {
    const std::string& o = f[3];
    const bool d = o.size() > 1 && o.back() == 'd';  // dynamic tiles
    const bool k = o.size() > 1 && o.back() == 'k';  // split tail
    const std::string order = d || k ? o.substr(0, o.size() - 1) : o;
    if (order != "m" && order != "n" && order != "ms" && order != "ns")
      throw ConfigError("kernel pin '" + text +
                        "': the tile order is m or n, then s for K serpentine, then d for "
                        "dynamic tiles or k for a split tail");
    c.raster_n = order[0] == 'n';
    c.k_serpentine = order.size() == 2;
    c.dynamic_tiles = d;
    c.split_tail = k;
  }
  if (f.size() > 4) {
    if (f[4].size() != 2)
      throw ConfigError("kernel pin '" + text + "': L2 hints are two letters (A, B)");
    c.hint_a = hint(f[4][0], text);
    c.hint_b = hint(f[4][1], text);
  }
  if (f.size() > 5) c.stagger = small_int(f[5], 0, 64, "the stagger", text);
  return c;
}

std::string hopper_config_text(const HopperGemmConfig& c) {
  std::string s = c.schedule == HopperSchedule::kPingPong ? "pp:"
                  : c.tile_m != 128
                      ? "coop" + std::to_string(c.tile_m) + "x" + std::to_string(c.tile_n) + ":"
                  : c.tile_n != 256 ? "coop" + std::to_string(c.tile_n) + ":"
                                    : "coop:";
  s += std::to_string(c.cluster);
  if (c.cluster_n > 1) s += "x" + std::to_string(c.cluster_n);
  s += ":" + std::to_string(c.group_m);
  const bool extras = c.raster_n || c.k_serpentine || c.dynamic_tiles || c.split_tail ||
                      c.hint_a != L2Hint::kNormal || c.hint_b != L2Hint::kNormal || c.stagger != 0;
  if (extras) {
    s += c.raster_n ? ":n" : ":m";
    s += c.k_serpentine ? "s" : "";
    s += c.dynamic_tiles ? "d:" : c.split_tail ? "k:" : ":";
    s += hint_char(c.hint_a);
    s += hint_char(c.hint_b);
    s += ":" + std::to_string(c.stagger);
  }
  return s;
}

KernelPins parse_kernel_pins(const std::string& text) {
  KernelPins pins;
  std::istringstream in(text);
  std::string token;
  while (in >> token) {
    const auto eq = token.find('=');
    const std::string key = token.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : token.substr(eq + 1);
    if (key == "gated" && !value.empty()) {
      pins.gated = parse_hopper_config(value);
    } else if (key == "down" && !value.empty()) {
      pins.down = value == "cublaslt" ? DownPin{} : DownPin{false, parse_hopper_config(value)};
    } else {
      throw ConfigError("kernel pin '" + token +
                        "': expected gated=CONFIG or down=CONFIG|cublaslt");
    }
  }
  return pins;
}

std::string kernel_pins_text(const KernelPins& pins) {
  std::string s;
  if (pins.gated) s = "gated=" + hopper_config_text(*pins.gated);
  if (pins.down) {
    if (!s.empty()) s += ' ';
    s += "down=" +
         (pins.down->cublaslt ? std::string("cublaslt") : hopper_config_text(pins.down->config));
  }
  return s;
}

}  // namespace fusionscope::kernels::detail
