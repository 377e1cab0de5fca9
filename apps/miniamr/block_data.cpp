#include "block_data.hpp"

#include <algorithm>

namespace miniamr {
namespace {

// A face's cells as offsets: plane `p` along the face's direction, (a, b)
// its in-face coordinates; b is the fastest-moving index wherever the
// layout allows (x and y faces), so the copies run over contiguous cells.
struct FaceFrame {
  FaceFrame(const BlockShape& block_shape, int which) : shape(block_shape), face(which) {
    const size_t si = shape.sy() * shape.sz(), sj = shape.sz();
    switch (face / 2) {
      case 0:
        plane_stride = si, a_stride = sj, b_stride = 1;
        break;
      case 1:
        plane_stride = sj, a_stride = si, b_stride = 1;
        break;
      default:
        plane_stride = 1, a_stride = si, b_stride = sj;
        break;
    }
  }
  const BlockShape& shape;
  int face;
  size_t plane_stride = 0, a_stride = 0, b_stride = 0;
  size_t at(int v, int plane, int a, int b) const {
    return static_cast<size_t>(v) * shape.var_stride() + static_cast<size_t>(plane) * plane_stride +
           static_cast<size_t>(a) * a_stride + static_cast<size_t>(b) * b_stride;
  }
  int extent() const {  // cells along the face's direction
    return face / 2 == 0 ? shape.nx : face / 2 == 1 ? shape.ny : shape.nz;
  }
  // The interior plane next to the face, and the ghost plane on it.
  int boundary_plane() const { return face % 2 == 0 ? 1 : extent(); }
  int ghost_plane() const { return face % 2 == 0 ? 0 : extent() + 1; }
};

// The in-face ranges a same-level message covers: the interior, or with
// the ghost rows of earlier directions (27-point stencil: y planes carry x
// ghosts, z planes carry x and y ghosts).
void same_level_range(const BlockShape& shape, const FaceMessage& m, int& a0, int& a1, int& b0,
                      int& b1) {
  a0 = 1, a1 = shape.face_a(m.face), b0 = 1, b1 = shape.face_b(m.face);
  if (!m.with_ghost_rows) return;
  const int direction = m.face / 2;
  if (direction >= 1) a0 = 0, a1 += 1;  // x is axis a of y and z faces
  if (direction == 2) b0 = 0, b1 += 1;  // y is axis b of z faces
}

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

size_t face_message_size(const BlockShape& shape, const FaceMessage& m) {
  size_t per_var = 0;
  if (m.kind == FaceKind::kSameLevel) {
    int a0, a1, b0, b1;
    same_level_range(shape, m, a0, a1, b0, b1);
    per_var = static_cast<size_t>(a1 - a0 + 1) * static_cast<size_t>(b1 - b0 + 1);
  } else {
    per_var = static_cast<size_t>(shape.face_a(m.face) / 2) *
              static_cast<size_t>(shape.face_b(m.face) / 2);
  }
  return per_var * static_cast<size_t>(m.vars);
}

void pack_face(const BlockShape& shape, const double* sender, const FaceMessage& m, double* out) {
  const FaceFrame frame{shape, opposite_face(m.face)};
  const int plane = frame.boundary_plane();
  const int ha = shape.face_a(m.face) / 2, hb = shape.face_b(m.face) / 2;
  size_t n = 0;
  for (int v = m.first_var; v < m.first_var + m.vars; ++v) {
    switch (m.kind) {
      case FaceKind::kSameLevel: {
        int a0, a1, b0, b1;
        same_level_range(shape, m, a0, a1, b0, b1);
        for (int a = a0; a <= a1; ++a) {
          const double* row = sender + frame.at(v, plane, a, 0);
          for (int b = b0; b <= b1; ++b) out[n++] = row[static_cast<size_t>(b) * frame.b_stride];
        }
        break;
      }
      case FaceKind::kCoarseToFine:
        // The quarter the fine receiver faces, each cell / 4.
        for (int a = 1; a <= ha; ++a)
          for (int b = 1; b <= hb; ++b)
            out[n++] = sender[frame.at(v, plane, a + m.quarter_a * ha, b + m.quarter_b * hb)] / 4.0;
        break;
      case FaceKind::kFineToCoarse:
        for (int a = 1; a <= ha; ++a)
          for (int b = 1; b <= hb; ++b)
            out[n++] = sender[frame.at(v, plane, 2 * a - 1, 2 * b - 1)] +
                       sender[frame.at(v, plane, 2 * a - 1, 2 * b)] +
                       sender[frame.at(v, plane, 2 * a, 2 * b - 1)] +
                       sender[frame.at(v, plane, 2 * a, 2 * b)];
        break;
    }
  }
}

void unpack_face(const BlockShape& shape, double* receiver, const FaceMessage& m,
                 const double* in) {
  const FaceFrame frame{shape, m.face};
  const int plane = frame.ghost_plane();
  const int ha = shape.face_a(m.face) / 2, hb = shape.face_b(m.face) / 2;
  size_t n = 0;
  for (int v = m.first_var; v < m.first_var + m.vars; ++v) {
    switch (m.kind) {
      case FaceKind::kSameLevel: {
        int a0, a1, b0, b1;
        same_level_range(shape, m, a0, a1, b0, b1);
        for (int a = a0; a <= a1; ++a) {
          double* row = receiver + frame.at(v, plane, a, 0);
          for (int b = b0; b <= b1; ++b) row[static_cast<size_t>(b) * frame.b_stride] = in[n++];
        }
        break;
      }
      case FaceKind::kCoarseToFine:
        for (int a = 1; a <= ha; ++a)
          for (int b = 1; b <= hb; ++b) {
            const double value = in[n++];
            receiver[frame.at(v, plane, 2 * a - 1, 2 * b - 1)] = value;
            receiver[frame.at(v, plane, 2 * a - 1, 2 * b)] = value;
            receiver[frame.at(v, plane, 2 * a, 2 * b - 1)] = value;
            receiver[frame.at(v, plane, 2 * a, 2 * b)] = value;
          }
        break;
      case FaceKind::kFineToCoarse:
        for (int a = 1; a <= ha; ++a)
          for (int b = 1; b <= hb; ++b)
            receiver[frame.at(v, plane, a + m.quarter_a * ha, b + m.quarter_b * hb)] = in[n++];
        break;
    }
  }
}

void apply_boundary(const BlockShape& shape, double* block, int face, int first_var, int vars,
                    bool with_ghost_rows) {
  const FaceFrame frame{shape, face};
  FaceMessage m;
  m.face = face;
  m.with_ghost_rows = with_ghost_rows;
  int a0, a1, b0, b1;
  same_level_range(shape, m, a0, a1, b0, b1);
  for (int v = first_var; v < first_var + vars; ++v)
    for (int a = a0; a <= a1; ++a)
      for (int b = b0; b <= b1; ++b)
        block[frame.at(v, frame.ghost_plane(), a, b)] =
            block[frame.at(v, frame.boundary_plane(), a, b)];
}

void init_block(const BlockShape& shape, int64_t number, double* block) {
  std::fill(block, block + shape.values(), 0.0);
  const uint64_t seed = mix(static_cast<uint64_t>(number) * 0x100000001b3ULL + 0x5eed);
  for (int v = 0; v < shape.num_vars; ++v)
    for (int i = 1; i <= shape.nx; ++i)
      for (int j = 1; j <= shape.ny; ++j)
        for (int k = 1; k <= shape.nz; ++k) {
          const uint64_t bits = mix(seed ^ mix(shape.index(v, i, j, k)));
          block[shape.index(v, i, j, k)] = static_cast<double>(bits >> 11) * 0x1.0p-53;
        }
}

void stencil(const BlockShape& shape, int points, double* block, int v, std::vector<double>& work) {
  work.resize(static_cast<size_t>(shape.cells()));
  const size_t si = shape.sy() * shape.sz(), sj = shape.sz();
  size_t n = 0;
  for (int i = 1; i <= shape.nx; ++i)
    for (int j = 1; j <= shape.ny; ++j)
      for (int k = 1; k <= shape.nz; ++k) {
        const double* c = block + shape.index(v, i, j, k);
        if (points == 7) {
          work[n++] = (c[-static_cast<ptrdiff_t>(si)] + c[-static_cast<ptrdiff_t>(sj)] + c[-1] +
                       c[0] + c[1] + c[sj] + c[si]) /
                      7.0;
        } else {
          double planes = 0.0;
          for (int di = -1; di <= 1; ++di) {
            double plane = 0.0;
            for (int dj = -1; dj <= 1; ++dj)
              for (int dk = -1; dk <= 1; ++dk)
                plane += c[static_cast<ptrdiff_t>(di) * static_cast<ptrdiff_t>(si) +
                           static_cast<ptrdiff_t>(dj) * static_cast<ptrdiff_t>(sj) + dk];
            planes += plane;
          }
          work[n++] = planes / 27.0;
        }
      }
  n = 0;
  for (int i = 1; i <= shape.nx; ++i)
    for (int j = 1; j <= shape.ny; ++j)
      for (int k = 1; k <= shape.nz; ++k) block[shape.index(v, i, j, k)] = work[n++];
}

double block_sum(const BlockShape& shape, const double* block, int v) {
  double sum = 0.0;
  for (int i = 1; i <= shape.nx; ++i)
    for (int j = 1; j <= shape.ny; ++j)
      for (int k = 1; k <= shape.nz; ++k) sum += block[shape.index(v, i, j, k)];
  return sum;
}

void split_into_child(const BlockShape& shape, const double* parent, int octant, double* child) {
  const int hx = shape.nx / 2, hy = shape.ny / 2, hz = shape.nz / 2;
  const int ox = octant & 1, oy = (octant >> 1) & 1, oz = (octant >> 2) & 1;
  std::fill(child, child + shape.values(), 0.0);
  for (int v = 0; v < shape.num_vars; ++v)
    for (int p = 1; p <= hx; ++p)
      for (int q = 1; q <= hy; ++q)
        for (int r = 1; r <= hz; ++r) {
          const double value = parent[shape.index(v, p + ox * hx, q + oy * hy, r + oz * hz)] / 8.0;
          for (int di = 0; di < 2; ++di)
            for (int dj = 0; dj < 2; ++dj)
              for (int dk = 0; dk < 2; ++dk)
                child[shape.index(v, 2 * p - 1 + di, 2 * q - 1 + dj, 2 * r - 1 + dk)] = value;
        }
}

void consolidate_child(const BlockShape& shape, const double* child, int octant, double* parent) {
  const int hx = shape.nx / 2, hy = shape.ny / 2, hz = shape.nz / 2;
  const int ox = octant & 1, oy = (octant >> 1) & 1, oz = (octant >> 2) & 1;
  for (int v = 0; v < shape.num_vars; ++v)
    for (int p = 1; p <= hx; ++p)
      for (int q = 1; q <= hy; ++q)
        for (int r = 1; r <= hz; ++r) {
          double sum = 0.0;
          for (int dk = 0; dk < 2; ++dk)
            for (int dj = 0; dj < 2; ++dj)
              for (int di = 0; di < 2; ++di)
                sum += child[shape.index(v, 2 * p - 1 + di, 2 * q - 1 + dj, 2 * r - 1 + dk)];
          parent[shape.index(v, p + ox * hx, q + oy * hy, r + oz * hz)] = sum;
        }
}

}  // namespace miniamr
