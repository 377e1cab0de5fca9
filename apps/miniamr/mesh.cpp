#include "mesh.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace miniamr {
namespace {

std::vector<int> prime_factors(int n) {
  std::vector<int> factors;
  if (n == 1) return {1};
  for (int f = 2; f * f <= n; ++f)
    while (n % f == 0) factors.push_back(f), n /= f;
  if (n > 1) factors.push_back(n);
  return factors;
}

// The direction a factor of the rank count splits (the reference's
// default ordering): a factor above 2 goes to the largest remaining count
// it divides (x before y before z; z when neither x nor y qualifies), a
// factor of 2 (or 1) to the largest remaining count.
int split_direction(int factor, const std::array<int, 3>& remaining) {
  if (factor > 2) {
    int best = -1;
    for (int d = 0; d < 2; ++d)
      if (remaining[d] % factor == 0 && (best < 0 || remaining[d] > remaining[best])) best = d;
    if (best < 0) return 2;
    if (remaining[2] % factor == 0 && remaining[2] > remaining[best]) return 2;
    return best;
  }
  int best = 0;
  for (int d = 1; d < 3; ++d)
    if (remaining[d] > remaining[best]) best = d;
  return best;
}

// The factors from largest to smallest, each with its direction.
std::vector<std::pair<int, int>> split_sequence(const Params& params) {
  std::vector<int> factors = prime_factors(params.ranks());
  std::array<int, 3> remaining{params.npx, params.npy, params.npz};
  std::vector<std::pair<int, int>> sequence;
  for (auto it = factors.rbegin(); it != factors.rend(); ++it) {
    const int d = split_direction(*it, remaining);
    remaining[d] /= *it;
    sequence.emplace_back(*it, d);
  }
  return sequence;
}

// ------------------------------------------------------------ objects --

struct Box {
  double lo[3], hi[3];
};

// The reference's tests, with their quirks (see docs in README.md): strict
// comparisons, sums in increasing dimension order, and the rectangle
// surface's z test reached only when y does not overlap.
bool hits(const Object& object, const Box& box) {
  const auto& c = object.center;
  const auto& s = object.size;
  for (double size : s)
    if (size < 0.0) return false;
  auto overlaps = [&](int d) { return box.hi[d] > c[d] - s[d] && box.lo[d] < c[d] + s[d]; };
  auto straddles = [&](int d) {
    return (box.lo[d] < c[d] - s[d] && box.hi[d] < c[d] + s[d]) ||
           (box.lo[d] > c[d] - s[d] && box.hi[d] > c[d] + s[d]);
  };
  auto term = [&](int d, double v) {
    const double x = (v - c[d]) / s[d];
    return x * x;
  };
  const int type = object.type;
  if (type == 0) {
    if (!overlaps(0)) return false;
    if (straddles(0)) return overlaps(1) && overlaps(2);
    if (overlaps(1)) return straddles(1) && overlaps(2);
    return overlaps(2) && straddles(2);
  }
  if (type == 1) return overlaps(0) && overlaps(1) && overlaps(2);

  // Centre classification of dimensions: inside the block's extent or not,
  // and which face is nearest (v = 0: low, 1: high).
  bool inside[3];
  int v[3];
  for (int d = 0; d < 3; ++d) {
    if (c[d] < box.lo[d]) {
      inside[d] = false, v[d] = 0;
    } else if (c[d] > box.hi[d]) {
      inside[d] = false, v[d] = 1;
    } else {
      inside[d] = true;
      v[d] = c[d] < (box.lo[d] + box.hi[d]) / 2.0 ? 0 : 1;
    }
  }
  auto near_face = [&](int d) { return v[d] == 0 ? box.lo[d] : box.hi[d]; };
  auto far_face = [&](int d) { return v[d] == 0 ? box.hi[d] : box.lo[d]; };
  auto near_ok = [&](std::initializer_list<int> dims) {
    int outside = 0, only = -1;
    for (int d : dims)
      if (!inside[d]) ++outside, only = d;
    if (outside == 0) return true;
    if (outside == 1) return std::fabs(near_face(only) - c[only]) < s[only];
    double sum = 0.0;
    bool first = true;
    for (int d : dims)
      if (!inside[d]) {
        sum = first ? term(d, near_face(d)) : sum + term(d, near_face(d));
        first = false;
      }
    return sum < 1.0;
  };

  if (type >= 2 && type <= 15) {
    bool hit = near_ok({0, 1, 2});
    if (type % 2 == 0) {
      const double far = term(0, far_face(0)) + term(1, far_face(1)) + term(2, far_face(2));
      hit = hit && far > 1.0;
    }
    if (!hit || type < 4) return hit;
    switch (type) {
      case 4:
      case 5:
        return !(box.hi[0] < c[0]);
      case 6:
      case 7:
        return !(box.lo[0] > c[0]);
      case 8:
      case 9:
        return !(box.hi[1] < c[1]);
      case 10:
      case 11:
        return !(box.lo[1] > c[1]);
      case 12:
      case 13:
        return !(box.hi[2] < c[2]);
      default:
        return !(box.lo[2] > c[2]);
    }
  }
  if (type >= 20 && type <= 25) {
    const int axis = (type - 20) / 2;
    const int c1 = (axis + 1) % 3, c2 = (axis + 2) % 3;
    if (!overlaps(axis)) return false;
    const bool near2 = c1 < c2 ? near_ok({c1, c2}) : near_ok({c2, c1});
    if (type % 2 == 1) return near2;
    const double far2 = term(c1, far_face(c1)) + term(c2, far_face(c2));
    // The reference tests the end caps on x whatever the axis; kept.
    if (straddles(0)) return near2;
    return near2 && far2 > 1.0;
  }
  return false;  // types 16-19 refine nothing
}

}  // namespace

std::vector<std::array<int, 3>> Mesh::rank_positions(const Params& params) {
  const int ranks = params.ranks();
  std::vector<std::array<int, 3>> position(static_cast<size_t>(ranks), {0, 0, 0});
  int size = ranks;
  for (const auto& [factor, d] : split_sequence(params)) {
    const int sub = size / factor;
    for (int r = 0; r < ranks; ++r) {
      const int digit = (r % size) / sub;
      position[static_cast<size_t>(r)][static_cast<size_t>(d)] =
          position[static_cast<size_t>(r)][static_cast<size_t>(d)] * factor + digit;
    }
    size = sub;
  }
  return position;
}

Mesh::Mesh(const Params& params, int ranks)
    : params_(params), ranks_(ranks), objects_(params.objects) {
  level0_ = {static_cast<int64_t>(params.npx) * params.init_x,
             static_cast<int64_t>(params.npy) * params.init_y,
             static_cast<int64_t>(params.npz) * params.init_z};
  const int64_t unit = int64_t{1} << (params.num_refine + 1);
  for (int d = 0; d < 3; ++d)
    mesh_size_[static_cast<size_t>(d)] = level0_[static_cast<size_t>(d)] * unit;
  if (std::max({level0_[0], level0_[1], level0_[2]}) << params.num_refine >= (int64_t{1} << 20))
    throw std::invalid_argument(
        "the mesh is too fine: more than 2^20 blocks across at the deepest level");
  block_start_.assign(static_cast<size_t>(params.num_refine) + 2, 0);
  const int64_t level0_blocks = level0_[0] * level0_[1] * level0_[2];
  for (int level = 1; level <= params.num_refine + 1; ++level)
    block_start_[static_cast<size_t>(level)] =
        block_start_[static_cast<size_t>(level) - 1] + (level0_blocks << (3 * (level - 1)));

  // Level 0: rank r owns the init_x x init_y x init_z blocks at its position.
  const auto position = rank_positions(params);
  std::unordered_map<uint64_t, int> rank_at;
  for (int r = 0; r < ranks; ++r) {
    const auto& p = position[static_cast<size_t>(r)];
    rank_at[BlockKey{0, p[0], p[1], p[2]}.packed()] = r;
  }
  for (int k = 0; k < level0_[2]; ++k)
    for (int j = 0; j < level0_[1]; ++j)
      for (int i = 0; i < level0_[0]; ++i) {
        const BlockKey key{0, i, j, k};
        const int owner = rank_at.at(
            BlockKey{0, i / params.init_x, j / params.init_y, k / params.init_z}.packed());
        leaves_.push_back({key, number_of(key), owner});
      }
  reindex();
}

int64_t Mesh::number_of(const BlockKey& key) const {
  const int64_t across = level0_[0] << key.level, up = level0_[1] << key.level;
  return block_start_[static_cast<size_t>(key.level)] + (key.k * up + key.j) * across + key.i;
}

void Mesh::reindex() {
  std::sort(leaves_.begin(), leaves_.end(),
            [](const MeshBlock& a, const MeshBlock& b) { return a.number < b.number; });
  index_.clear();
  index_.reserve(leaves_.size() * 2);
  for (size_t n = 0; n < leaves_.size(); ++n) index_[leaves_[n].key.packed()] = static_cast<int>(n);
}

int Mesh::find(const BlockKey& key) const {
  const auto it = index_.find(key.packed());
  return it == index_.end() ? -1 : it->second;
}

Neighbour Mesh::neighbour(int leaf, int face) const {
  const BlockKey key = leaves_[static_cast<size_t>(leaf)].key;
  const int d = face / 2, step = face % 2 == 0 ? -1 : 1;
  BlockKey across = key;
  int* coordinate = d == 0 ? &across.i : d == 1 ? &across.j : &across.k;
  *coordinate += step;
  Neighbour result;
  if (*coordinate < 0 || *coordinate >= (level0_[static_cast<size_t>(d)] << key.level))
    return result;
  if (const int same = find(across); same >= 0) {
    result.kind = Neighbour::Kind::kSame;
    result.blocks[0] = same;
    return result;
  }
  if (key.level > 0) {
    if (const int coarse = find(across.parent()); coarse >= 0) {
      result.kind = Neighbour::Kind::kCoarser;
      result.blocks[0] = coarse;
      // This leaf's half of the coarse face along the face's axes (a, b).
      const int hi = key.i & 1, hj = key.j & 1, hk = key.k & 1;
      result.quarter_a = d == 0 ? hj : hi;
      result.quarter_b = d == 2 ? hj : hk;
      return result;
    }
  }
  // Finer: the four children of `across` that touch this leaf's face.
  result.kind = Neighbour::Kind::kFiner;
  for (int octant = 0; octant < 8; ++octant) {
    const int bit[3] = {octant & 1, (octant >> 1) & 1, (octant >> 2) & 1};
    if (bit[d] != (step > 0 ? 0 : 1)) continue;
    const int qa = d == 0 ? bit[1] : bit[0];
    const int qb = d == 2 ? bit[1] : bit[2];
    const int child = find(across.child(octant));
    if (child < 0) throw std::logic_error("miniamr: the mesh lost its 2:1 balance across a face");
    result.blocks[static_cast<size_t>(qa + 2 * qb)] = child;
  }
  return result;
}

std::vector<int64_t> Mesh::blocks_per_level() const {
  std::vector<int64_t> counts(static_cast<size_t>(params_.num_refine) + 1, 0);
  for (const MeshBlock& block : leaves_) ++counts[static_cast<size_t>(block.key.level)];
  return counts;
}

void Mesh::move_objects() {
  for (Object& object : objects_)
    for (int d = 0; d < 3; ++d) {
      auto& c = object.center[static_cast<size_t>(d)];
      c += object.move[static_cast<size_t>(d)];
      object.size[static_cast<size_t>(d)] += object.grow[static_cast<size_t>(d)];
      if (object.bounce) {
        if (c >= 1.0) {
          c = 2.0 - c;
          object.move[static_cast<size_t>(d)] = -object.move[static_cast<size_t>(d)];
        } else if (c <= 0.0) {
          c = 0.0 - c;
          object.move[static_cast<size_t>(d)] = -object.move[static_cast<size_t>(d)];
        }
      }
    }
}

std::array<double, 6> Mesh::box(const BlockKey& key) const {
  std::array<double, 6> result{};
  const int64_t width = int64_t{1} << (params_.num_refine + 1 - key.level);
  const int64_t index[3] = {key.i, key.j, key.k};
  for (int d = 0; d < 3; ++d) {
    result[static_cast<size_t>(d)] = static_cast<double>(index[d] * width) /
                                     static_cast<double>(mesh_size_[static_cast<size_t>(d)]);
    result[static_cast<size_t>(d) + 3] = static_cast<double>((index[d] + 1) * width) /
                                         static_cast<double>(mesh_size_[static_cast<size_t>(d)]);
  }
  return result;
}

bool Mesh::intersects(const std::array<double, 6>& corners) const {
  Box b;
  for (int d = 0; d < 3; ++d)
    b.lo[d] = corners[static_cast<size_t>(d)], b.hi[d] = corners[static_cast<size_t>(d) + 3];
  for (const Object& object : objects_)
    if (hits(object, b)) return true;
  return false;
}

Transition Mesh::refine_pass() {
  const int top = params_.num_refine;
  const size_t n = leaves_.size();
  const int cells[3] = {params_.nx, params_.ny, params_.nz};
  std::vector<char> hit(n, 0), guarded(n, 0), split(n, 0);
  int deepest = 0;
  for (size_t b = 0; b < n; ++b) {
    const BlockKey& key = leaves_[b].key;
    deepest = std::max(deepest, key.level);
    if (params_.uniform_refine) {
      hit[b] = key.level < top;
      continue;
    }
    auto corners = box(key);
    if (params_.refine_ghost) {
      // One cell of this block wider on every side.
      const double half = static_cast<double>(int64_t{1} << (top - key.level));
      for (int d = 0; d < 3; ++d) {
        const double w =
            2.0 * (half / cells[d]) / static_cast<double>(mesh_size_[static_cast<size_t>(d)]);
        corners[static_cast<size_t>(d)] -= w;
        corners[static_cast<size_t>(d) + 3] += w;
      }
    }
    hit[b] = intersects(corners);
    if (!hit[b] && params_.refine_ghost && key.level > 0) {
      // Would coarsen, but the parent (one of its cells wider) would refine.
      const double parent_half = static_cast<double>(int64_t{1} << (top - key.level + 1));
      for (int d = 0; d < 3; ++d) {
        const double w =
            (parent_half / cells[d]) / static_cast<double>(mesh_size_[static_cast<size_t>(d)]);
        corners[static_cast<size_t>(d)] -= w;
        corners[static_cast<size_t>(d) + 3] += w;
      }
      guarded[b] = intersects(corners);
    }
  }
  for (size_t b = 0; b < n; ++b) split[b] = hit[b] && leaves_[b].key.level < top;

  // 2:1 balance across faces: a splitting block's coarser face neighbours
  // split too, level by level from the deepest down.
  std::vector<std::array<Neighbour, kFaces>> neighbours(n);
  for (size_t b = 0; b < n; ++b)
    for (int face = 0; face < kFaces; ++face)
      neighbours[b][static_cast<size_t>(face)] = neighbour(static_cast<int>(b), face);
  for (int level = deepest; level >= 1; --level)
    for (size_t b = 0; b < n; ++b)
      if (split[b] && leaves_[b].key.level == level)
        for (const Neighbour& across : neighbours[b])
          if (across.kind == Neighbour::Kind::kCoarser)
            split[static_cast<size_t>(across.blocks[0])] = 1;

  // A leaf may coarsen when nothing refines it or its same-level
  // neighbours, and no finer leaf faces it.
  auto coarsenable = [&](size_t b) {
    if (leaves_[b].key.level == 0 || hit[b] || guarded[b] || split[b]) return false;
    for (const Neighbour& across : neighbours[b]) {
      if (across.kind == Neighbour::Kind::kFiner) return false;
      if (across.kind == Neighbour::Kind::kSame && split[static_cast<size_t>(across.blocks[0])])
        return false;
    }
    return true;
  };
  std::vector<char> merged(n, 0);
  std::vector<BlockKey> merges;
  if (!params_.uniform_refine) {
    for (size_t b = 0; b < n; ++b) {
      const BlockKey& key = leaves_[b].key;
      if (key.level == 0 || key.octant() != 0) continue;
      const BlockKey parent = key.parent();
      bool all = true;
      std::array<int, 8> children{};
      for (int octant = 0; octant < 8 && all; ++octant) {
        children[static_cast<size_t>(octant)] = find(parent.child(octant));
        all = children[static_cast<size_t>(octant)] >= 0 &&
              coarsenable(static_cast<size_t>(children[static_cast<size_t>(octant)]));
      }
      if (!all) continue;
      merges.push_back(parent);
      for (int child : children) merged[static_cast<size_t>(child)] = 1;
    }
  }

  // The new tree, and where each new leaf's cells come from.
  Transition transition;
  transition.old_blocks = leaves_;
  std::vector<std::pair<MeshBlock, Transition::Source>> next;
  next.reserve(n + 8 * n);
  for (size_t b = 0; b < n; ++b) {
    if (merged[b]) continue;
    const MeshBlock& block = leaves_[b];
    if (!split[b]) {
      Transition::Source source;
      source.old[0] = static_cast<int>(b);
      next.emplace_back(block, source);
      continue;
    }
    ++counters_.splits;
    parent_rank_[block.key.packed()] = block.owner;
    for (int octant = 0; octant < 8; ++octant) {
      const BlockKey child = block.key.child(octant);
      Transition::Source source;
      source.kind = Transition::Kind::kSplit;
      source.old[0] = static_cast<int>(b);
      source.octant = octant;
      next.emplace_back(MeshBlock{child, number_of(child), block.owner}, source);
    }
  }
  for (const BlockKey& parent : merges) {
    ++counters_.reforms;
    const auto record = parent_rank_.find(parent.packed());
    const int owner = record == parent_rank_.end()
                          ? leaves_[static_cast<size_t>(find(parent.child(0)))].owner
                          : record->second;
    if (record != parent_rank_.end()) parent_rank_.erase(record);
    Transition::Source source;
    source.kind = Transition::Kind::kMerge;
    for (int octant = 0; octant < 8; ++octant) {
      source.old[static_cast<size_t>(octant)] = find(parent.child(octant));
      if (leaves_[static_cast<size_t>(source.old[static_cast<size_t>(octant)])].owner != owner)
        ++counters_.moved_coarsening;
    }
    next.emplace_back(MeshBlock{parent, number_of(parent), owner}, source);
  }
  std::sort(next.begin(), next.end(),
            [](const auto& a, const auto& b) { return a.first.number < b.first.number; });
  leaves_.clear();
  for (auto& [block, source] : next) {
    leaves_.push_back(block);
    transition.sources.push_back(source);
  }
  reindex();
  return transition;
}

Transition Mesh::balance() {
  Transition transition;
  std::vector<int64_t> per_rank(static_cast<size_t>(ranks_), 0);
  for (const MeshBlock& block : leaves_) ++per_rank[static_cast<size_t>(block.owner)];
  const int64_t min_b = *std::min_element(per_rank.begin(), per_rank.end());
  const int64_t max_b = *std::max_element(per_rank.begin(), per_rank.end());
  const int64_t sum_b = std::accumulate(per_rank.begin(), per_rank.end(), int64_t{0});
  if (params_.lb_opt == 0 || params_.uniform_refine || max_b <= min_b + 1 || sum_b == 0)
    return transition;
  const double ratio = static_cast<double>(max_b - min_b) * ranks_ / static_cast<double>(sum_b);
  if (!(ratio > params_.inbalance / 100.0)) return transition;
  ++counters_.load_balances;

  // Recursive coordinate bisection on the blocks' centres (integer units),
  // one cut per prime factor of the rank count, in the reference's order.
  const size_t n = leaves_.size();
  std::vector<std::array<int64_t, 3>> centre(n);
  for (size_t b = 0; b < n; ++b) {
    const BlockKey& key = leaves_[b].key;
    const int64_t width = int64_t{1} << (params_.num_refine + 1 - key.level);
    centre[b] = {key.i * width + width / 2, key.j * width + width / 2, key.k * width + width / 2};
  }
  std::vector<int> first_rank(n, 0);  // each block's group: [first_rank, first_rank + group)
  int group = ranks_;
  for (const auto& [factor, d] : split_sequence(params_)) {
    if (factor == 1) continue;
    const int sub = group / factor;
    // The blocks of each current group, cut into `factor` parts along d.
    std::unordered_map<int, std::vector<size_t>> members;
    for (size_t b = 0; b < n; ++b) members[first_rank[b]].push_back(b);
    for (auto& [first, dots] : members) {
      const size_t bins = static_cast<size_t>(mesh_size_[static_cast<size_t>(d)]);
      std::vector<int64_t> histogram(bins, 0);
      for (size_t b : dots) ++histogram[static_cast<size_t>(centre[b][static_cast<size_t>(d)])];
      const int64_t total = static_cast<int64_t>(dots.size());
      const int64_t part = (total + factor - 1) / factor;
      std::vector<int64_t> point(static_cast<size_t>(factor - 1), INT64_MAX),
          extra(point.size(), 0), in_bin(point.size(), 0);
      int64_t sum = 0;
      size_t cut = 0;
      for (size_t i = 0; i < bins && cut + 1 < static_cast<size_t>(factor); ++i) {
        sum += histogram[i];
        if (sum >= static_cast<int64_t>(cut + 1) * part) {
          point[cut] = static_cast<int64_t>(i);
          in_bin[cut] = histogram[i];
          extra[cut] = sum - static_cast<int64_t>(cut + 1) * part;
          ++cut;
        }
      }
      std::vector<int> part_of(dots.size(), factor - 1);
      std::vector<std::vector<size_t>> tied(point.size());
      for (size_t m = 0; m < dots.size(); ++m) {
        const int64_t x = centre[dots[m]][static_cast<size_t>(d)];
        for (size_t j = 0; j < point.size(); ++j) {
          if (x > point[j]) continue;
          if (x < point[j] || extra[j] == 0)
            part_of[m] = static_cast<int>(j);
          else
            tied[j].push_back(m);
          break;
        }
      }
      // Blocks on a cut's plane: split by the next dimensions' histograms.
      for (size_t j = 0; j < point.size(); ++j) {
        if (tied[j].empty()) continue;
        const int64_t want = in_bin[j] - extra[j];
        auto cut_on = [&](int dim, std::vector<size_t>& candidates, int64_t wanted, int64_t& over) {
          std::vector<int64_t> h(static_cast<size_t>(mesh_size_[static_cast<size_t>(dim)]), 0);
          for (size_t m : candidates)
            ++h[static_cast<size_t>(centre[dots[m]][static_cast<size_t>(dim)])];
          int64_t cumulative = 0;
          for (size_t i = 0; i < h.size(); ++i) {
            cumulative += h[i];
            if (cumulative >= wanted) {
              over = cumulative - wanted;
              return std::pair<int64_t, int64_t>{static_cast<int64_t>(i), h[i]};
            }
          }
          over = 0;
          return std::pair<int64_t, int64_t>{static_cast<int64_t>(h.size()), 0};
        };
        const int d1 = (d + 1) % 3, d2 = (d + 2) % 3;
        int64_t over1 = 0;
        const auto [p1, count1] = cut_on(d1, tied[j], want, over1);
        std::vector<size_t> still;
        for (size_t m : tied[j]) {
          const int64_t x = centre[dots[m]][static_cast<size_t>(d1)];
          if (x < p1 || (x == p1 && over1 == 0))
            part_of[m] = static_cast<int>(j);
          else if (x > p1)
            part_of[m] = static_cast<int>(j) + 1;
          else
            still.push_back(m);
        }
        if (still.empty()) continue;
        int64_t over2 = 0;
        const int64_t p2 = cut_on(d2, still, count1 - over1, over2).first;
        for (size_t m : still)
          part_of[m] = centre[dots[m]][static_cast<size_t>(d2)] <= p2 ? static_cast<int>(j)
                                                                      : static_cast<int>(j) + 1;
      }
      for (size_t m = 0; m < dots.size(); ++m) first_rank[dots[m]] = first + part_of[m] * sub;
    }
    group = sub;
  }
  transition.old_blocks = leaves_;
  bool moved = false;
  for (size_t b = 0; b < n; ++b) {
    Transition::Source source;
    source.old[0] = static_cast<int>(b);
    transition.sources.push_back(source);
    if (leaves_[b].owner != first_rank[b]) {
      ++counters_.moved_load_balance;
      leaves_[b].owner = first_rank[b];
      moved = true;
    }
  }
  if (!moved) transition = Transition{};
  return transition;
}

}  // namespace miniamr
