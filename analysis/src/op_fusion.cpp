#include "fusionscope/analysis/op_fusion.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <set>

namespace fusionscope::analysis {

namespace {

bool plan_vocabulary(std::string_view op) {
  return !op.empty() && std::all_of(op.begin(), op.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return std::isalnum(c) || c == '.' || c == '-' || c == '+' || c == '*' || c == '_';
  });
}

// "layer12." when the name starts with a layer prefix, else "".
std::string_view layer_prefix(std::string_view op) {
  constexpr std::string_view kLayer = "layer";
  if (!op.starts_with(kLayer)) return {};
  size_t i = kLayer.size();
  while (i < op.size() && std::isdigit(static_cast<unsigned char>(op[i]))) ++i;
  if (i == kLayer.size() || i >= op.size() || op[i] != '.') return {};
  return op.substr(0, i + 1);
}

struct UnionFind {
  std::vector<size_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  size_t find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(size_t a, size_t b) { parent[find(a)] = find(b); }
};

}  // namespace

std::vector<std::string> op_parts(std::string_view op) {
  if (!plan_vocabulary(op)) return {std::string(op)};
  const std::string_view prefix = layer_prefix(op);
  std::string_view rest = op.substr(prefix.size());
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= rest.size(); ++i) {
    if (i < rest.size() && rest[i] != '+' && rest[i] != '*' && rest[i] != '_') continue;
    if (i > start) {
      std::string part(rest.substr(start, i - start));
      parts.push_back(layer_prefix(part).empty() ? std::string(prefix) + part : part);
    }
    start = i + 1;
  }
  if (parts.empty()) parts.emplace_back(op);
  return parts;
}

bool covers_everything(std::string_view op) {
  return op == "mlp" || op.starts_with("mlp.layers");
}

std::vector<FusionGroup> fusion_groups(const std::vector<std::string>& only_a,
                                       const std::vector<std::string>& only_b) {
  const size_t n = only_a.size(), m = only_b.size();
  UnionFind uf(n + m);
  std::vector<std::vector<std::string>> parts(n + m);
  for (size_t i = 0; i < n; ++i) parts[i] = op_parts(only_a[i]);
  for (size_t j = 0; j < m; ++j) parts[n + j] = op_parts(only_b[j]);
  for (size_t i = 0; i < n; ++i) {
    if (only_a[i].empty()) continue;  // kernels outside any op are not an op
    for (size_t j = 0; j < m; ++j) {
      if (only_b[j].empty()) continue;
      bool linked = covers_everything(only_a[i]) || covers_everything(only_b[j]);
      for (const std::string& p : parts[i]) {
        if (linked) break;
        linked = std::find(parts[n + j].begin(), parts[n + j].end(), p) != parts[n + j].end();
      }
      if (linked) uf.join(i, n + j);
    }
  }
  std::vector<FusionGroup> groups;
  std::vector<long> group_of(n + m, -1);
  for (size_t x = 0; x < n + m; ++x) {
    const size_t root = uf.find(x);
    if (group_of[root] < 0) {
      group_of[root] = static_cast<long>(groups.size());
      groups.emplace_back();
    }
    FusionGroup& g = groups[static_cast<size_t>(group_of[root])];
    if (x < n)
      g.a.push_back(x);
    else
      g.b.push_back(x - n);
  }
  return groups;
}

std::vector<OpDiff> fusion_aware_ops(const std::vector<OpDiff>& ops) {
  std::vector<std::string> only_a, only_b;
  std::vector<size_t> a_row, b_row;  // row in `ops` of each name
  for (size_t r = 0; r < ops.size(); ++r) {
    if (ops[r].presence == Presence::kOnlyA) {
      only_a.push_back(ops[r].op);
      a_row.push_back(r);
    } else if (ops[r].presence == Presence::kOnlyB) {
      only_b.push_back(ops[r].op);
      b_row.push_back(r);
    }
  }
  // Row -> the fused row that replaces it (placed at its first A op), or none.
  std::vector<long> fused_at(ops.size(), -1);
  std::vector<OpDiff> fused;
  for (const FusionGroup& g : fusion_groups(only_a, only_b)) {
    if (g.a.empty() || g.b.empty()) continue;
    OpDiff d;
    d.presence = Presence::kFused;
    auto add = [](std::vector<KernelGroup>& to, const std::vector<KernelGroup>& from) {
      for (const KernelGroup& k : from) {
        auto it = std::find_if(to.begin(), to.end(),
                               [&](const KernelGroup& x) { return x.name == k.name; });
        if (it == to.end()) {
          to.push_back(k);
        } else {
          it->count += k.count;
          it->total_ns += k.total_ns;
        }
      }
    };
    std::vector<size_t> rows;
    for (size_t i : g.a) rows.push_back(a_row[i]);
    for (size_t j : g.b) rows.push_back(b_row[j]);
    std::sort(rows.begin(), rows.end());  // A's ops in their order, then B's
    for (size_t r : rows) {
      const OpDiff& o = ops[r];
      if (o.presence == Presence::kOnlyA) {
        d.a_ops.push_back(o.op);
        add(d.a, o.a);
        d.a_total_ns += o.a_total_ns;
        d.a_count += o.a_count;
      } else {
        d.b_ops.push_back(o.op);
        add(d.b, o.b);
        d.b_total_ns += o.b_total_ns;
        d.b_count += o.b_count;
      }
    }
    for (size_t i = 0; i < d.a_ops.size(); ++i) d.op += (i ? ", " : "") + d.a_ops[i];
    const long at = static_cast<long>(fused.size());
    for (size_t r : rows) fused_at[r] = at;
    fused.push_back(std::move(d));
  }
  std::vector<OpDiff> out;
  std::set<long> placed;
  for (size_t r = 0; r < ops.size(); ++r) {
    if (fused_at[r] < 0) {
      out.push_back(ops[r]);
    } else if (placed.insert(fused_at[r]).second) {
      out.push_back(fused[static_cast<size_t>(fused_at[r])]);
    }
  }
  return out;
}

}  // namespace fusionscope::analysis
