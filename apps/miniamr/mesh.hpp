// The mesh: every rank keeps the whole block tree (which blocks exist, at
// which level, on which rank), not the cells. Refinement, the 2:1 balance,
// consolidation and load balancing are then functions of the tree and the
// objects alone, computed identically on every rank with no messages; only
// the cells move (see Transition). The tree evolves exactly as the
// reference miniAMR's distributed one does: same blocks per level after
// every refinement, same splits and reforms (the rules are in mesh.cpp).
//
// Integer geometry, as the reference's: a level-0 block is 2^(num_refine+1)
// units wide, a level-L block 2^(num_refine+1-L); a block is named by its
// level and its index (i, j, k) among the level's blocks, and numbered
// block_start[L] + (k * GY_L + j) * GX_L + i (GX_L blocks across at level L).
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "block_data.hpp"
#include "params.hpp"

namespace miniamr {

struct BlockKey {
  int level = 0;
  int i = 0, j = 0, k = 0;
  bool operator==(const BlockKey&) const = default;
  uint64_t packed() const {
    return (static_cast<uint64_t>(level) << 60) | (static_cast<uint64_t>(i) << 40) |
           (static_cast<uint64_t>(j) << 20) | static_cast<uint64_t>(k);
  }
  BlockKey parent() const { return {level - 1, i / 2, j / 2, k / 2}; }
  int octant() const { return (i & 1) | ((j & 1) << 1) | ((k & 1) << 2); }
  BlockKey child(int octant) const {
    return {level + 1, 2 * i + (octant & 1), 2 * j + ((octant >> 1) & 1),
            2 * k + ((octant >> 2) & 1)};
  }
};

struct MeshBlock {
  BlockKey key;
  int64_t number = 0;
  int owner = 0;
};

// What lies across a leaf's face.
struct Neighbour {
  enum class Kind : uint8_t { kBoundary, kSame, kCoarser, kFiner } kind = Kind::kBoundary;
  // kSame, kCoarser: blocks[0]; kFiner: the four leaves, indexed by
  // quarter_a + 2 * quarter_b (their halves along the face's two axes).
  std::array<int, 4> blocks{-1, -1, -1, -1};
  // kCoarser: the quarter of the coarse block's face this leaf faces.
  int quarter_a = 0, quarter_b = 0;
};

// Where each leaf of the new tree gets its cells from, in the old tree.
struct Transition {
  enum class Kind : uint8_t { kKeep, kSplit, kMerge };
  struct Source {
    Kind kind = Kind::kKeep;
    // kKeep: old[0] is the same block (maybe on another rank); kSplit:
    // old[0] is the parent and `octant` the child's; kMerge: old[o] is
    // child o.
    std::array<int, 8> old{};
    int octant = 0;
  };
  std::vector<MeshBlock> old_blocks;
  std::vector<Source> sources;  // one per new leaf; empty: nothing changed
};

struct MeshCounters {
  int64_t splits = 0;
  int64_t reforms = 0;
  int64_t moved_load_balance = 0;
  int64_t moved_coarsening = 0;
  int refine_calls = 0;
  int load_balances = 0;
};

class Mesh {
 public:
  Mesh(const Params& params, int ranks);

  const std::vector<MeshBlock>& blocks() const { return leaves_; }  // by number
  int find(const BlockKey& key) const;                              // leaf index, or -1
  Neighbour neighbour(int leaf, int face) const;
  std::vector<int64_t> blocks_per_level() const;
  const MeshCounters& counters() const { return counters_; }
  const Params& params() const { return params_; }
  const std::vector<Object>& objects() const { return objects_; }

  // The objects' motion of one timestep.
  void move_objects();
  // One refinement pass (flags, 2:1 balance, splits, consolidations).
  Transition refine_pass();
  // The passes of a refine(ts) call: num_refine at ts 0, block_change after.
  int passes(int ts) const { return ts == 0 ? params_.num_refine : params_.block_change; }
  // After the passes: the reference's load-balance test, and recursive
  // coordinate bisection when it asks for one. Returns a kKeep transition
  // (empty when nothing moves).
  Transition balance();
  void count_refine_call() { ++counters_.refine_calls; }

  // The reference's refine(ts), for every program: its passes, then the
  // load balance (after each pass too with --lb_opt 2), the block counts
  // reported after the passes. `follow(transition)` moves the cells after
  // each change of the tree (an empty transition: nothing to do);
  // `report(*this)` prints the counts.
  template <typename Follow, typename Report>
  void refine(int ts, Follow&& follow, Report&& report) {
    count_refine_call();
    for (int pass = 0; pass < passes(ts); ++pass) {
      follow(refine_pass());
      if (params_.lb_opt == 2) follow(balance());
    }
    report(*this);
    if (params_.lb_opt >= 1) follow(balance());
  }

  // Rank positions in the process grid (the reference's factor order).
  static std::vector<std::array<int, 3>> rank_positions(const Params& params);

 private:
  int64_t number_of(const BlockKey& key) const;
  std::array<double, 6> box(const BlockKey& key) const;  // lo x, y, z, hi x, y, z
  bool intersects(const std::array<double, 6>& box) const;
  void reindex();

  Params params_;
  int ranks_;
  std::array<int64_t, 3> level0_{};     // level-0 blocks across the domain
  std::array<int64_t, 3> mesh_size_{};  // the domain in integer units
  std::vector<int64_t> block_start_;
  std::vector<Object> objects_;
  std::vector<MeshBlock> leaves_;
  std::unordered_map<uint64_t, int> index_;
  // Internal nodes: the rank holding the parent's record (where its
  // children gather when it is re-formed), as in the reference.
  std::unordered_map<uint64_t, int> parent_rank_;
  MeshCounters counters_;
};

}  // namespace miniamr
