#include "faces.hpp"

namespace miniamr {

std::array<DirectionPlan, 3> plan_faces(const Mesh& mesh, bool ghost_rows) {
  std::array<DirectionPlan, 3> plans;
  const int leaves = static_cast<int>(mesh.blocks().size());
  for (int leaf = 0; leaf < leaves; ++leaf)
    for (int face = 0; face < kFaces; ++face) {
      DirectionPlan& plan = plans[static_cast<size_t>(face / 2)];
      const Neighbour across = mesh.neighbour(leaf, face);
      FaceTransfer transfer;
      transfer.receiver = leaf;
      transfer.message.face = face;
      transfer.message.with_ghost_rows = ghost_rows;
      switch (across.kind) {
        case Neighbour::Kind::kBoundary:
          plan.boundaries.push_back({leaf, face});
          break;
        case Neighbour::Kind::kSame:
          transfer.sender = across.blocks[0];
          plan.transfers.push_back(transfer);
          break;
        case Neighbour::Kind::kCoarser:
          transfer.sender = across.blocks[0];
          transfer.message.kind = FaceKind::kCoarseToFine;
          transfer.message.quarter_a = across.quarter_a;
          transfer.message.quarter_b = across.quarter_b;
          plan.transfers.push_back(transfer);
          break;
        case Neighbour::Kind::kFiner:
          for (int quarter = 0; quarter < 4; ++quarter) {
            transfer.sender = across.blocks[static_cast<size_t>(quarter)];
            transfer.message.kind = FaceKind::kFineToCoarse;
            transfer.message.quarter_a = quarter % 2;
            transfer.message.quarter_b = quarter / 2;
            plan.transfers.push_back(transfer);
          }
          break;
      }
    }
  return plans;
}

}  // namespace miniamr
