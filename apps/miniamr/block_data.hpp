// A block's cells and the kernels that touch them: initial values, the 7-
// and 27-point averaging stencils, the faces that travel between
// neighbouring blocks (same level, coarse to fine, fine to coarse), the
// domain's reflective boundary, splitting and consolidating, and the block
// sums behind the checksums.
//
// A block stores num_vars arrays of (nx+2) x (ny+2) x (nz+2) doubles, [v][i][j][k]
// with k fastest; cells 1..n are the interior, 0 and n+1 one ghost layer.
// Every kernel reads and writes in a fixed order and nothing depends on
// which rank holds a block, so the three programs compute bit-identical
// blocks whatever the decomposition (built with -ffp-contract=off).
//
// The factors follow the reference and keep the plain sum of all cells
// constant: a coarse cell gives a quarter of itself to each of the four fine
// ghost cells it faces, a coarse ghost cell holds the sum of the four fine
// cells facing it, a split gives each child cell an eighth of its parent
// cell, and a consolidated cell is the sum of its eight children.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace miniamr {

// Faces: 0..5 = -x, +x, -y, +y, -z, +z; a face's direction is face / 2.
constexpr int kFaces = 6;
constexpr int opposite_face(int face) { return face ^ 1; }

struct BlockShape {
  int nx = 0, ny = 0, nz = 0, num_vars = 0;

  size_t sx() const { return static_cast<size_t>(nx + 2); }
  size_t sy() const { return static_cast<size_t>(ny + 2); }
  size_t sz() const { return static_cast<size_t>(nz + 2); }
  size_t var_stride() const { return sx() * sy() * sz(); }
  size_t values() const { return var_stride() * static_cast<size_t>(num_vars); }
  size_t index(int v, int i, int j, int k) const {
    return static_cast<size_t>(v) * var_stride() +
           (static_cast<size_t>(i) * sy() + static_cast<size_t>(j)) * sz() + static_cast<size_t>(k);
  }
  int cells() const { return nx * ny * nz; }
  // Extents of a face's two in-face axes (a, b): (y, z) for x faces, (x, z)
  // for y faces, (x, y) for z faces.
  int face_a(int face) const { return face / 2 == 0 ? ny : nx; }
  int face_b(int face) const { return face / 2 == 2 ? ny : nz; }
};

// How a face message relates its sender and its receiver.
enum class FaceKind : uint8_t {
  kSameLevel,     // the sender's boundary plane, cell for cell
  kCoarseToFine,  // a quarter of the coarse sender's plane, each cell / 4
  kFineToCoarse,  // the fine sender's plane, 2x2 cells summed
};

// One face message's description. `face` is the RECEIVER's face; the sender
// packs its opposite face. `quarter_a`/`quarter_b` (0 or 1) give the half
// along each in-face axis that the fine block of the pair covers on the
// coarse block's face. Variables [first_var, first_var + vars).
struct FaceMessage {
  FaceKind kind = FaceKind::kSameLevel;
  // 27-point stencil: y and z planes carry the ghosts of earlier directions.
  bool with_ghost_rows = false;
  // No padding: a message travels in task arguments, which spmd ranks
  // compare byte for byte (uninitialized padding made them differ).
  uint8_t unused[2] = {};
  int face = 0;
  int quarter_a = 0, quarter_b = 0;
  int first_var = 0, vars = 0;
};
static_assert(std::has_unique_object_representations_v<FaceMessage>);

// Number of doubles a face message carries.
size_t face_message_size(const BlockShape& shape, const FaceMessage& message);

void pack_face(const BlockShape& shape, const double* sender, const FaceMessage& message,
               double* out);
void unpack_face(const BlockShape& shape, double* receiver, const FaceMessage& message,
                 const double* in);

// The reflective boundary: the ghost plane on `face` copies the first
// interior plane, for variables [first_var, first_var + vars).
void apply_boundary(const BlockShape& shape, double* block, int face, int first_var, int vars,
                    bool with_ghost_rows);

// Initial values: a function of the block's global number and the cell only
// (not of the rank that makes it), uniform in [0, 1).
void init_block(const BlockShape& shape, int64_t number, double* block);

// The averaging stencil (7 or 27 points) on variable v, through `work`
// (shape.cells() doubles): every new value is computed from old values.
void stencil(const BlockShape& shape, int points, double* block, int v, std::vector<double>& work);

// The plain sum of variable v's interior cells, in i, j, k order.
double block_sum(const BlockShape& shape, const double* block, int v);

// Child `octant` (bit 0: +x half, bit 1: +y, bit 2: +z) of `parent`.
void split_into_child(const BlockShape& shape, const double* parent, int octant, double* child);
// The parent's octant from one child.
void consolidate_child(const BlockShape& shape, const double* child, int octant, double* parent);

}  // namespace miniamr
