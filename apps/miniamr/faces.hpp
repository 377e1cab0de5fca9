// Which face messages a ghost exchange needs, from the replicated mesh: the
// same list, in the same order, on every rank, so that a sender and its
// receiver pack and unpack bundles without telling each other anything.
#pragma once

#include <array>
#include <vector>

#include "block_data.hpp"
#include "mesh.hpp"

namespace miniamr {

struct FaceTransfer {
  int receiver = 0;  // leaf indices in Mesh::blocks()
  int sender = 0;
  FaceMessage message;  // variables filled in by the exchange
};

struct BoundaryFace {
  int leaf = 0;
  int face = 0;
};

struct DirectionPlan {
  std::vector<FaceTransfer> transfers;  // by receiver, face, quarter
  std::vector<BoundaryFace> boundaries;
};

// One plan per direction (x, y, z). `ghost_rows`: the 27-point stencil's
// planes, which carry the ghosts of earlier directions.
std::array<DirectionPlan, 3> plan_faces(const Mesh& mesh, bool ghost_rows);

}  // namespace miniamr
