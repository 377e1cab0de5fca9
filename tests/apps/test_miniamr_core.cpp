// Unit tests of miniamr-core (apps/miniamr): the block kernels (split and
// consolidate, face packing at the three level relations, the stencils, the
// boundary), the replicated mesh (2:1 face balance on random decks, the
// reference's block counts for two decks) and the command line.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "block_data.hpp"
#include "mesh.hpp"
#include "params.hpp"

namespace miniamr {
namespace {

// ------------------------------------------------------------ helpers --

std::vector<double> random_block(const BlockShape& shape, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> value(0.0, 1.0);
  std::vector<double> block(shape.values());
  for (double& cell : block) cell = value(generator);
  return block;
}

// The cell at (plane, a, b) of a face's frame: plane along the face's
// direction, (a, b) its in-face axes, (y, z) for x faces, (x, z) for y
// faces, (x, y) for z faces (block_data.hpp).
size_t face_cell(const BlockShape& shape, int face, int v, int plane, int a, int b) {
  switch (face / 2) {
    case 0:
      return shape.index(v, plane, a, b);
    case 1:
      return shape.index(v, a, plane, b);
    default:
      return shape.index(v, a, b, plane);
  }
}

int extent(const BlockShape& shape, int face) {
  return face / 2 == 0 ? shape.nx : face / 2 == 1 ? shape.ny : shape.nz;
}
int ghost_plane(const BlockShape& shape, int face) {
  return face % 2 == 0 ? 0 : extent(shape, face) + 1;
}
int boundary_plane(const BlockShape& shape, int face) {
  return face % 2 == 0 ? 1 : extent(shape, face);
}

// Sends `message` from `sender` to `receiver` through a buffer of the
// announced size (with a sentinel behind it: nothing may write past it).
void transfer(const BlockShape& shape, const std::vector<double>& sender,
              std::vector<double>& receiver, const FaceMessage& message) {
  const size_t size = face_message_size(shape, message);
  std::vector<double> buffer(size + 1, -7.0);
  pack_face(shape, sender.data(), message, buffer.data());
  ASSERT_EQ(buffer[size], -7.0) << "pack_face wrote past face_message_size";
  unpack_face(shape, receiver.data(), message, buffer.data());
}

void expect_invalid(const std::function<void()>& action, const std::string& part) {
  try {
    action();
    ADD_FAILURE() << "no std::invalid_argument; expected one containing '" << part << "'";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find(part), std::string::npos)
        << "message '" << error.what() << "' lacks '" << part << "'";
  }
}

Params parse(std::vector<std::string> words) {
  words.insert(words.begin(), "miniamr");
  std::vector<const char*> argv;
  for (const std::string& word : words) argv.push_back(word.c_str());
  return parse_params(static_cast<int>(argv.size()), argv.data());
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find(' ', at);
    if (end != at) words.push_back(text.substr(at, end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return words;
}

const BlockShape kShape{4, 6, 8, 2};  // unequal extents: an axis mix-up shows

// ------------------------------------------------ split / consolidate --

TEST(MiniamrBlocks, SplitGivesEachChildCellAnEighthOfItsParentCell) {
  const BlockShape& shape = kShape;
  const auto parent = random_block(shape, 1);
  for (int octant = 0; octant < 8; ++octant) {
    std::vector<double> child(shape.values(), 99.0);
    split_into_child(shape, parent.data(), octant, child.data());
    const int ox = octant & 1, oy = (octant >> 1) & 1, oz = (octant >> 2) & 1;
    for (int v = 0; v < shape.num_vars; ++v) {
      double octant_sum = 0.0;
      for (int i = 1; i <= shape.nx / 2; ++i)
        for (int j = 1; j <= shape.ny / 2; ++j)
          for (int k = 1; k <= shape.nz / 2; ++k)
            octant_sum += parent[shape.index(v, i + ox * shape.nx / 2, j + oy * shape.ny / 2,
                                             k + oz * shape.nz / 2)];
      for (int i = 1; i <= shape.nx; ++i)
        for (int j = 1; j <= shape.ny; ++j)
          for (int k = 1; k <= shape.nz; ++k)
            ASSERT_EQ(child[shape.index(v, i, j, k)],
                      parent[shape.index(v, (i + 1) / 2 + ox * shape.nx / 2,
                                         (j + 1) / 2 + oy * shape.ny / 2,
                                         (k + 1) / 2 + oz * shape.nz / 2)] /
                          8.0)
                << "octant " << octant << " v " << v << " cell " << i << "," << j << "," << k;
      // Eight copies of each parent cell / 8: the child holds its octant's sum.
      EXPECT_NEAR(block_sum(shape, child.data(), v), octant_sum, 1e-12 * octant_sum);
    }
    // Ghosts are zero.
    for (int v = 0; v < shape.num_vars; ++v)
      for (int j = 0; j <= shape.ny + 1; ++j)
        for (int k = 0; k <= shape.nz + 1; ++k) {
          EXPECT_EQ(child[shape.index(v, 0, j, k)], 0.0);
          EXPECT_EQ(child[shape.index(v, shape.nx + 1, j, k)], 0.0);
        }
  }
}

// Each parent cell comes back to within rounding: a split gives eight child
// cells x / 8 (exact), but consolidating adds them one by one, and 3x / 8 is
// not always a double (x = 0.879202..., v 0 cell 1,1,5 of this block comes
// back one ulp off), so the round trip is exact only to a few ulp.
TEST(MiniamrBlocks, SplitThenConsolidateRoundTripsEveryCell) {
  const BlockShape& shape = kShape;
  const auto parent = random_block(shape, 2);
  std::vector<double> rebuilt(shape.values(), 0.0);
  double children_sum[2] = {0.0, 0.0};
  for (int octant = 0; octant < 8; ++octant) {
    std::vector<double> child(shape.values());
    split_into_child(shape, parent.data(), octant, child.data());
    for (int v = 0; v < shape.num_vars; ++v) children_sum[v] += block_sum(shape, child.data(), v);
    consolidate_child(shape, child.data(), octant, rebuilt.data());
  }
  for (int v = 0; v < shape.num_vars; ++v) {
    const double sum = block_sum(shape, parent.data(), v);
    EXPECT_NEAR(children_sum[v], sum, 1e-12 * sum) << "v " << v;
    EXPECT_NEAR(block_sum(shape, rebuilt.data(), v), sum, 1e-12 * sum) << "v " << v;
    for (int i = 1; i <= shape.nx; ++i)
      for (int j = 1; j <= shape.ny; ++j)
        for (int k = 1; k <= shape.nz; ++k)
          ASSERT_NEAR(rebuilt[shape.index(v, i, j, k)], parent[shape.index(v, i, j, k)],
                      4 * std::numeric_limits<double>::epsilon() * parent[shape.index(v, i, j, k)])
              << "v " << v << " cell " << i << "," << j << "," << k;
  }
}

TEST(MiniamrBlocks, ConsolidateSumsEightChildCells) {
  const BlockShape& shape = kShape;
  const auto child = random_block(shape, 3);
  for (int octant = 0; octant < 8; ++octant) {
    std::vector<double> parent(shape.values(), -1.0);
    consolidate_child(shape, child.data(), octant, parent.data());
    const int ox = octant & 1, oy = (octant >> 1) & 1, oz = (octant >> 2) & 1;
    const int hx = shape.nx / 2, hy = shape.ny / 2, hz = shape.nz / 2;
    for (int v = 0; v < shape.num_vars; ++v)
      for (int i = 1; i <= shape.nx; ++i)
        for (int j = 1; j <= shape.ny; ++j)
          for (int k = 1; k <= shape.nz; ++k) {
            const bool in_octant =
                (i > hx) == (ox == 1) && (j > hy) == (oy == 1) && (k > hz) == (oz == 1);
            const double got = parent[shape.index(v, i, j, k)];
            if (!in_octant) {
              ASSERT_EQ(got, -1.0) << "octant " << octant << " wrote outside itself";
              continue;
            }
            const int p = i - ox * hx, q = j - oy * hy, r = k - oz * hz;
            double want = 0.0;
            for (int di = 0; di < 2; ++di)
              for (int dj = 0; dj < 2; ++dj)
                for (int dk = 0; dk < 2; ++dk)
                  want += child[shape.index(v, 2 * p - 1 + di, 2 * q - 1 + dj, 2 * r - 1 + dk)];
            ASSERT_NEAR(got, want, 1e-14) << "octant " << octant;
          }
  }
}

// ------------------------------------------------------------- faces --

TEST(MiniamrFaces, MessageSizes) {
  const BlockShape& shape = kShape;
  FaceMessage m;
  m.vars = 2;
  m.face = 0;
  EXPECT_EQ(face_message_size(shape, m), size_t{6 * 8 * 2});
  m.face = 3;
  EXPECT_EQ(face_message_size(shape, m), size_t{4 * 8 * 2});
  m.face = 5;
  EXPECT_EQ(face_message_size(shape, m), size_t{4 * 6 * 2});
  m.with_ghost_rows = true;  // z planes carry the x and y ghosts
  EXPECT_EQ(face_message_size(shape, m), size_t{6 * 8 * 2});
  m.face = 2;  // y planes carry the x ghosts
  EXPECT_EQ(face_message_size(shape, m), size_t{6 * 8 * 2});
  m.face = 1;
  EXPECT_EQ(face_message_size(shape, m), size_t{6 * 8 * 2});
  m.with_ghost_rows = false;
  m.kind = FaceKind::kCoarseToFine;
  m.face = 4;
  EXPECT_EQ(face_message_size(shape, m), size_t{2 * 3 * 2});
  m.kind = FaceKind::kFineToCoarse;
  m.face = 0;
  m.vars = 1;
  EXPECT_EQ(face_message_size(shape, m), size_t{3 * 4});
}

TEST(MiniamrFaces, SameLevelCopiesTheSendersBoundaryPlane) {
  const BlockShape& shape = kShape;
  for (int face = 0; face < kFaces; ++face) {
    const auto sender = random_block(shape, 10 + face);
    const auto before = random_block(shape, 20 + face);
    auto receiver = before;
    FaceMessage m;
    m.face = face;
    m.first_var = 1, m.vars = 1;  // variable 0 must not travel
    transfer(shape, sender, receiver, m);
    const int ghost = ghost_plane(shape, face);
    const int plane = boundary_plane(shape, opposite_face(face));
    std::set<size_t> written;
    for (int a = 1; a <= shape.face_a(face); ++a)
      for (int b = 1; b <= shape.face_b(face); ++b) {
        const size_t at = face_cell(shape, face, 1, ghost, a, b);
        written.insert(at);
        ASSERT_EQ(receiver[at], sender[face_cell(shape, opposite_face(face), 1, plane, a, b)])
            << "face " << face << " a " << a << " b " << b;
      }
    for (size_t n = 0; n < receiver.size(); ++n)
      if (!written.count(n)) {
        ASSERT_EQ(receiver[n], before[n]) << "face " << face << " wrote " << n;
      }
  }
}

TEST(MiniamrFaces, SameLevelWithGhostRowsCarriesEarlierDirectionsGhosts) {
  const BlockShape& shape = kShape;
  const auto sender = random_block(shape, 30);
  auto receiver = random_block(shape, 31);
  FaceMessage m;
  m.face = 4;  // -z: x and y ghost rows travel too
  m.vars = 2;
  m.with_ghost_rows = true;
  transfer(shape, sender, receiver, m);
  for (int v = 0; v < 2; ++v)
    for (int i = 0; i <= shape.nx + 1; ++i)
      for (int j = 0; j <= shape.ny + 1; ++j)
        ASSERT_EQ(receiver[shape.index(v, i, j, 0)], sender[shape.index(v, i, j, shape.nz)])
            << i << "," << j;
}

TEST(MiniamrFaces, CoarseToFineGivesAQuarterOfEachCoarseCellToFourGhosts) {
  const BlockShape& shape = kShape;
  for (int face = 0; face < kFaces; ++face)
    for (int quarter = 0; quarter < 4; ++quarter) {
      const int qa = quarter & 1, qb = quarter >> 1;
      const auto coarse = random_block(shape, 40 + face);
      auto fine = random_block(shape, 50 + face);
      FaceMessage m;
      m.kind = FaceKind::kCoarseToFine;
      m.face = face;  // the fine receiver's face
      m.quarter_a = qa, m.quarter_b = qb;
      m.vars = 2;
      transfer(shape, coarse, fine, m);
      const int A = shape.face_a(face), B = shape.face_b(face);
      const int ghost = ghost_plane(shape, face);
      const int plane = boundary_plane(shape, opposite_face(face));
      for (int v = 0; v < 2; ++v) {
        double quarter_sum = 0.0, ghost_sum = 0.0;
        for (int a = 1; a <= A / 2; ++a)
          for (int b = 1; b <= B / 2; ++b)
            quarter_sum += coarse[face_cell(shape, opposite_face(face), v, plane, a + qa * A / 2,
                                            b + qb * B / 2)];
        for (int a = 1; a <= A; ++a)
          for (int b = 1; b <= B; ++b) {
            const double got = fine[face_cell(shape, face, v, ghost, a, b)];
            ghost_sum += got;
            const double want =
                coarse[face_cell(shape, opposite_face(face), v, plane, (a + 1) / 2 + qa * A / 2,
                                 (b + 1) / 2 + qb * B / 2)] /
                4.0;
            ASSERT_EQ(got, want) << "face " << face << " quarter " << quarter << " a " << a << " b "
                                 << b;
          }
        // Four ghosts of a quarter each: the fine side sees the quarter's sum.
        EXPECT_NEAR(ghost_sum, quarter_sum, 1e-12 * quarter_sum);
      }
    }
}

TEST(MiniamrFaces, FineToCoarseSumsTwoByTwoCellsIntoTheQuarter) {
  const BlockShape& shape = kShape;
  for (int face = 0; face < kFaces; ++face) {
    const auto before = random_block(shape, 60 + face);
    auto coarse = before;
    std::vector<std::vector<double>> fines;
    for (int quarter = 0; quarter < 4; ++quarter) {
      fines.push_back(random_block(shape, 70 + 4 * face + quarter));
      FaceMessage m;
      m.kind = FaceKind::kFineToCoarse;
      m.face = face;  // the coarse receiver's face
      m.quarter_a = quarter & 1, m.quarter_b = quarter >> 1;
      m.vars = 2;
      transfer(shape, fines.back(), coarse, m);
    }
    const int A = shape.face_a(face), B = shape.face_b(face);
    const int ghost = ghost_plane(shape, face);
    const int plane = boundary_plane(shape, opposite_face(face));
    std::set<size_t> written;
    for (int v = 0; v < 2; ++v) {
      double fine_sum = 0.0, ghost_sum = 0.0;
      for (int quarter = 0; quarter < 4; ++quarter) {
        const int qa = quarter & 1, qb = quarter >> 1;
        const auto& fine = fines[static_cast<size_t>(quarter)];
        auto at = [&](int a, int b) {
          return fine[face_cell(shape, opposite_face(face), v, plane, a, b)];
        };
        for (int a = 1; a <= A; ++a)
          for (int b = 1; b <= B; ++b) fine_sum += at(a, b);
        for (int a = 1; a <= A / 2; ++a)
          for (int b = 1; b <= B / 2; ++b) {
            const size_t cell = face_cell(shape, face, v, ghost, a + qa * A / 2, b + qb * B / 2);
            written.insert(cell);
            ghost_sum += coarse[cell];
            ASSERT_EQ(coarse[cell], at(2 * a - 1, 2 * b - 1) + at(2 * a - 1, 2 * b) +
                                        at(2 * a, 2 * b - 1) + at(2 * a, 2 * b))
                << "face " << face << " quarter " << quarter << " a " << a << " b " << b;
          }
      }
      // The coarse ghost plane holds the sum of the four fine planes.
      EXPECT_NEAR(ghost_sum, fine_sum, 1e-12 * fine_sum) << "face " << face;
    }
    for (size_t n = 0; n < coarse.size(); ++n)
      if (!written.count(n)) {
        ASSERT_EQ(coarse[n], before[n]) << "face " << face << " wrote " << n;
      }
  }
}

TEST(MiniamrFaces, BoundaryCopiesTheFirstInteriorPlane) {
  const BlockShape& shape = kShape;
  for (int face = 0; face < kFaces; ++face) {
    auto block = random_block(shape, 80 + face);
    apply_boundary(shape, block.data(), face, 0, 2, false);
    for (int v = 0; v < 2; ++v)
      for (int a = 1; a <= shape.face_a(face); ++a)
        for (int b = 1; b <= shape.face_b(face); ++b)
          ASSERT_EQ(block[face_cell(shape, face, v, ghost_plane(shape, face), a, b)],
                    block[face_cell(shape, face, v, boundary_plane(shape, face), a, b)])
              << "face " << face;
  }
}

// ----------------------------------------------------------- stencils --

TEST(MiniamrStencil, ConstantBlockWithConstantGhostsStaysConstant) {
  const BlockShape& shape = kShape;
  for (int points : {7, 27}) {
    std::vector<double> block(shape.values(), 1.25);
    std::vector<double> work;
    for (int round = 0; round < 3; ++round) stencil(shape, points, block.data(), 1, work);
    for (double cell : block) ASSERT_EQ(cell, 1.25) << points << "-point stencil";
  }
}

TEST(MiniamrStencil, AveragesTheNeighbourhoodOfOneVariableOnly) {
  const BlockShape& shape = kShape;
  for (int points : {7, 27}) {
    const auto old = random_block(shape, 90);
    auto block = old;
    std::vector<double> work;
    stencil(shape, points, block.data(), 1, work);
    for (int v = 0; v < 2; ++v)
      for (int i = 0; i <= shape.nx + 1; ++i)
        for (int j = 0; j <= shape.ny + 1; ++j)
          for (int k = 0; k <= shape.nz + 1; ++k) {
            const size_t at = shape.index(v, i, j, k);
            const bool interior =
                i >= 1 && i <= shape.nx && j >= 1 && j <= shape.ny && k >= 1 && k <= shape.nz;
            if (v == 0 || !interior) {
              ASSERT_EQ(block[at], old[at]);
              continue;
            }
            double want = 0.0;
            if (points == 7) {
              want =
                  (old[shape.index(v, i - 1, j, k)] + old[shape.index(v, i + 1, j, k)] +
                   old[shape.index(v, i, j - 1, k)] + old[shape.index(v, i, j + 1, k)] +
                   old[shape.index(v, i, j, k - 1)] + old[shape.index(v, i, j, k + 1)] + old[at]) /
                  7.0;
            } else {
              for (int di = -1; di <= 1; ++di)
                for (int dj = -1; dj <= 1; ++dj)
                  for (int dk = -1; dk <= 1; ++dk)
                    want += old[shape.index(v, i + di, j + dj, k + dk)];
              want /= 27.0;
            }
            ASSERT_NEAR(block[at], want, 1e-14)
                << points << "-point at " << i << "," << j << "," << k;
          }
  }
}

TEST(MiniamrBlocks, InitAndSum) {
  const BlockShape& shape = kShape;
  std::vector<double> a(shape.values(), 5.0), b(shape.values(), 6.0), c(shape.values());
  init_block(shape, 17, a.data());
  init_block(shape, 17, b.data());
  init_block(shape, 18, c.data());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double sum = 0.0;
  for (int i = 0; i <= shape.nx + 1; ++i)
    for (int j = 0; j <= shape.ny + 1; ++j)
      for (int k = 0; k <= shape.nz + 1; ++k) {
        const double value = a[shape.index(1, i, j, k)];
        const bool interior =
            i >= 1 && i <= shape.nx && j >= 1 && j <= shape.ny && k >= 1 && k <= shape.nz;
        if (!interior) {
          ASSERT_EQ(value, 0.0);
          continue;
        }
        ASSERT_GE(value, 0.0);
        ASSERT_LT(value, 1.0);
        sum += value;
      }
  EXPECT_NEAR(block_sum(shape, a.data(), 1), sum, 1e-12);
  EXPECT_GT(sum, 0.25 * shape.cells());  // uniform in [0, 1): about cells / 2
  EXPECT_LT(sum, 0.75 * shape.cells());
}

// -------------------------------------------------------------- mesh --

// Every leaf's six neighbours exist (neighbour() throws when the 2:1 balance
// is lost), differ by at most one level, and agree from both sides; the
// leaves tile the level-0 grid; find() and the numbering agree.
void check_mesh(const Mesh& mesh, const Params& params, const std::string& where) {
  const auto& blocks = mesh.blocks();
  const int top = params.num_refine;
  const int64_t level0 =
      int64_t{params.npx} * params.init_x * params.npy * params.init_y * params.npz * params.init_z;
  int64_t volume = 0;
  for (size_t n = 0; n < blocks.size(); ++n) {
    const MeshBlock& block = blocks[n];
    ASSERT_GE(block.key.level, 0) << where;
    ASSERT_LE(block.key.level, top) << where;
    ASSERT_EQ(mesh.find(block.key), static_cast<int>(n)) << where;
    ASSERT_GE(block.owner, 0) << where;
    ASSERT_LT(block.owner, params.ranks()) << where;
    if (n > 0) {
      ASSERT_LT(blocks[n - 1].number, block.number) << where << ": not sorted by number";
    }
    volume += int64_t{1} << (3 * (top - block.key.level));
    for (int face = 0; face < kFaces; ++face) {
      Neighbour across;
      try {
        across = mesh.neighbour(static_cast<int>(n), face);
      } catch (const std::exception& error) {
        FAIL() << where << ": leaf " << n << " face " << face << ": " << error.what();
      }
      const int level = block.key.level;
      switch (across.kind) {
        case Neighbour::Kind::kBoundary:
          break;
        case Neighbour::Kind::kSame: {
          const int other = across.blocks[0];
          ASSERT_EQ(blocks[static_cast<size_t>(other)].key.level, level) << where;
          const Neighbour back = mesh.neighbour(other, opposite_face(face));
          ASSERT_EQ(back.kind, Neighbour::Kind::kSame) << where;
          ASSERT_EQ(back.blocks[0], static_cast<int>(n)) << where;
          break;
        }
        case Neighbour::Kind::kCoarser: {
          const int other = across.blocks[0];
          ASSERT_EQ(blocks[static_cast<size_t>(other)].key.level, level - 1) << where;
          const Neighbour back = mesh.neighbour(other, opposite_face(face));
          ASSERT_EQ(back.kind, Neighbour::Kind::kFiner) << where;
          ASSERT_EQ(back.blocks[static_cast<size_t>(across.quarter_a + 2 * across.quarter_b)],
                    static_cast<int>(n))
              << where << ": the quarters disagree";
          break;
        }
        case Neighbour::Kind::kFiner:
          for (int other : across.blocks) {
            ASSERT_GE(other, 0) << where;
            ASSERT_EQ(blocks[static_cast<size_t>(other)].key.level, level + 1) << where;
          }
          break;
      }
    }
  }
  ASSERT_EQ(volume, level0 << (3 * top)) << where << ": the leaves do not tile the domain";
}

Object random_object(std::mt19937& generator) {
  static const int types[] = {0, 1, 2, 3, 4, 7, 9, 10, 13, 14, 15, 20, 21, 22, 23, 24, 25};
  std::uniform_int_distribution<int> type(0, static_cast<int>(std::size(types)) - 1);
  std::uniform_real_distribution<double> centre(-0.2, 1.2), move(-0.08, 0.08), size(0.03, 0.45),
      grow(-0.01, 0.03);
  Object object;
  object.type = types[type(generator)];
  object.bounce = generator() % 2 == 0;
  for (int d = 0; d < 3; ++d) {
    object.center[d] = centre(generator);
    object.move[d] = move(generator);
    object.size[d] = size(generator);
    object.grow[d] = grow(generator);
  }
  return object;
}

TEST(MiniamrMesh, TwoToOneBalanceAfterEveryPassOnRandomDecks) {
  std::mt19937 generator(2024);
  int split_decks = 0, reformed_decks = 0;
  for (int deck = 0; deck < 24; ++deck) {
    Params params;
    params.nx = params.ny = params.nz = 4;
    params.num_refine = 1 + static_cast<int>(generator() % 3);
    params.block_change = 1 + static_cast<int>(generator() % params.num_refine);
    params.init_x = 1 + static_cast<int>(generator() % 2);
    params.init_y = 1 + static_cast<int>(generator() % 2);
    params.init_z = 1 + static_cast<int>(generator() % 2);
    params.npx = 1 + static_cast<int>(generator() % 2);
    params.npy = 1 + static_cast<int>(generator() % 2);
    params.refine_ghost = generator() % 4 == 0;
    const int objects = 1 + static_cast<int>(generator() % 3);
    for (int n = 0; n < objects; ++n) params.objects.push_back(random_object(generator));
    ASSERT_NO_THROW(check_params(params, params.ranks()));
    Mesh mesh(params, params.ranks());
    const std::string name = "deck " + std::to_string(deck);
    check_mesh(mesh, params, name + " initial");
    if (HasFatalFailure()) return;
    for (int ts = 0; ts <= 6; ++ts) {
      if (ts > 0) mesh.move_objects();
      for (int pass = 0; pass < mesh.passes(ts); ++pass) {
        const size_t before = mesh.blocks().size();
        const Transition transition = mesh.refine_pass();
        ASSERT_EQ(transition.old_blocks.size(), before);
        ASSERT_EQ(transition.sources.size(), mesh.blocks().size());
        check_mesh(mesh, params,
                   name + " ts " + std::to_string(ts) + " pass " + std::to_string(pass));
        if (HasFatalFailure()) return;
      }
      mesh.balance();
      check_mesh(mesh, params, name + " ts " + std::to_string(ts) + " balanced");
      if (HasFatalFailure()) return;
    }
    split_decks += mesh.counters().splits > 0;
    reformed_decks += mesh.counters().reforms > 0;
  }
  // The balance is only tested where the decks refine and coarsen.
  std::printf("%d of 24 decks split blocks, %d re-formed some\n", split_decks, reformed_decks);
  EXPECT_GE(split_decks, 16);
  EXPECT_GE(reformed_decks, 6);
}

TEST(MiniamrMesh, UniformRefineReachesTheTopLevelEverywhere) {
  Params params = parse(split_words(
      "--nx 4 --ny 4 --nz 4 --num_refine 2 --uniform_refine 1 --init_x 2 --init_y 1 --init_z 1"));
  Mesh mesh(params, 1);
  for (int pass = 0; pass < mesh.passes(0); ++pass) mesh.refine_pass();
  const auto counts = mesh.blocks_per_level();
  ASSERT_EQ(counts.size(), size_t{3});
  EXPECT_EQ(counts[0], 0);
  EXPECT_EQ(counts[1], 0);
  EXPECT_EQ(counts[2], 2 * 64);
  EXPECT_EQ(mesh.counters().splits, 2 + 16);
  check_mesh(mesh, params, "uniform");
}

// The driver's refinement schedule (miniamr_mpi.cpp) on the mesh alone:
// refine(0), then per timestep the objects move and every refine_freq
// timesteps refine(ts); each refine call runs passes(ts) passes, reports the
// block counts, then load-balances.
struct DeckRun {
  std::vector<std::vector<int64_t>> counts;  // per refine call, per level
  MeshCounters counters;
};

DeckRun run_deck(const std::string& deck) {
  const Params params = parse(split_words(deck));
  check_params(params, params.ranks());
  Mesh mesh(params, params.ranks());
  DeckRun run;
  auto refine = [&](int ts) {
    mesh.count_refine_call();
    for (int pass = 0; pass < mesh.passes(ts); ++pass) mesh.refine_pass();
    run.counts.push_back(mesh.blocks_per_level());
    mesh.balance();
    check_mesh(mesh, params, "ts " + std::to_string(ts));
  };
  refine(0);
  for (int ts = 1; ts <= params.num_tsteps; ++ts) {
    mesh.move_objects();
    if (ts % params.refine_freq == 0) refine(ts);
  }
  run.counters = mesh.counters();
  return run;
}

TEST(MiniamrMesh, Deck1BlockCountsAreTheReferences) {
  const DeckRun run = run_deck(
      "--npx 2 --nx 4 --ny 4 --nz 4 --init_x 1 --init_y 2 --init_z 2 --num_refine 2 "
      "--max_blocks 2000 --num_tsteps 8 --stages_per_ts 2 --refine_freq 2 --checksum_freq 2 "
      "--num_objects 1 --object 2 0 -0.5 -0.5 -0.5 0.15 0.15 0.15 0.6 0.6 0.6 0.0 0.0 0.0");
  const std::vector<std::vector<int64_t>> want = {
      {8, 0, 0}, {4, 28, 32}, {0, 45, 152}, {0, 20, 352}, {0, 27, 296}};
  EXPECT_EQ(run.counts, want);
  EXPECT_EQ(run.counters.splits, 82);
  EXPECT_EQ(run.counters.reforms, 37);
  EXPECT_EQ(run.counters.refine_calls, 5);
}

TEST(MiniamrMesh, Deck2BlockTotalsAreTheReferences) {
  const DeckRun run = run_deck(
      "--npx 2 --npy 2 --nx 4 --ny 4 --nz 4 --num_refine 2 --num_tsteps 6 --stages_per_ts 2 "
      "--refine_freq 1 --checksum_freq 2 --num_objects 2 "
      "--object 3 0 0.25 0.25 0.5 0.05 0.0 0.0 0.12 0.12 0.12 0.0 0.0 0.0 "
      "--object 3 0 0.75 0.75 0.5 -0.05 0.0 0.0 0.12 0.12 0.12 0.0 0.0 0.0");
  ASSERT_EQ(run.counts.size(), size_t{7});
  for (size_t ts = 0; ts < run.counts.size(); ++ts) {
    int64_t total = 0;
    for (int64_t count : run.counts[ts]) total += count;
    EXPECT_EQ(total, 144) << "timestep " << ts;
  }
  EXPECT_EQ(run.counters.splits, 28);
  EXPECT_EQ(run.counters.reforms, 8);
}

// ------------------------------------------------------- command line --

TEST(MiniamrParams, ParsesTheReferencesFlags) {
  const Params p = parse(split_words(
      "--npx 2 --nx 4 --ny 6 --nz 8 --init_x 1 --init_y 2 --init_z 3 --num_refine 3 "
      "--max_blocks 2000 --num_tsteps 8 --stages_per_ts 2 --refine_freq 2 --checksum_freq 2 "
      "--send_faces --comm_vars 5 --num_objects 1 "
      "--object 2 1 -0.5 -0.25 0.5 0.1 0.2 0.3 0.6 0.7 0.8 0.01 0.02 0.03"));
  EXPECT_EQ(p.npx, 2);
  EXPECT_EQ(p.npy, 1);
  EXPECT_EQ(p.nx, 4);
  EXPECT_EQ(p.ny, 6);
  EXPECT_EQ(p.nz, 8);
  EXPECT_EQ(p.init_z, 3);
  EXPECT_EQ(p.num_refine, 3);
  EXPECT_EQ(p.block_change, 3);  // 0 means num_refine
  EXPECT_EQ(p.max_blocks, 2000);
  EXPECT_EQ(p.num_vars, 40);  // the reference's default
  EXPECT_EQ(p.comm_group(), 5);
  EXPECT_TRUE(p.send_faces);
  EXPECT_EQ(p.ranks(), 2);
  ASSERT_EQ(p.objects.size(), size_t{1});
  const Object& o = p.objects[0];
  EXPECT_EQ(o.type, 2);
  EXPECT_TRUE(o.bounce);
  EXPECT_EQ(o.center, (std::array<double, 3>{-0.5, -0.25, 0.5}));
  EXPECT_EQ(o.move, (std::array<double, 3>{0.1, 0.2, 0.3}));
  EXPECT_EQ(o.size, (std::array<double, 3>{0.6, 0.7, 0.8}));
  EXPECT_EQ(o.grow, (std::array<double, 3>{0.01, 0.02, 0.03}));
  EXPECT_NO_THROW(check_params(p, 2));
  EXPECT_EQ(parse({"--block_change", "1", "--num_refine", "4"}).block_change, 1);
  EXPECT_EQ(parse({}).comm_group(), 40);
}

TEST(MiniamrParams, RefusesBadFlagsAndValues) {
  expect_invalid([] { parse({"--bogus", "1"}); }, "unknown flag '--bogus'");
  expect_invalid([] { parse({"--nx", "abc"}); }, "--nx: not an integer");
  expect_invalid([] { parse({"--nx", "4x"}); }, "--nx: not an integer");
  expect_invalid([] { parse({"--nx"}); }, "--nx needs a value");
  expect_invalid([] { parse({"--uniform_refine", "2"}); }, "must be 0 or 1");
  expect_invalid(
      [] {
        parse({"--object", "2", "0", "0", "0", "0", "0", "0", "0", "1", "1", "1", "0", "0", "0"});
      },
      "--object: more objects than --num_objects declares");
  expect_invalid(
      [] {
        parse({"--num_objects", "1", "--object", "2", "0", "0.5"});
      },
      "--object needs a value");
  expect_invalid(
      [] {
        parse({"--num_objects", "1", "--object", "2", "0", "x", "0", "0", "0", "0", "0", "1", "1",
               "1", "0", "0", "0"});
      },
      "not a number");
  expect_invalid(
      [] {
        parse({"--num_objects", "2", "--object", "2", "0", "0", "0", "0", "0", "0", "0", "1", "1",
               "1", "0", "0", "0"});
      },
      "--num_objects 2 but 1 --object given");
  expect_invalid([] { parse({"--num_objects", "-1"}); }, "--num_objects: must be >= 0");
  expect_invalid([] { parse({"--help"}); }, "usage");
}

TEST(MiniamrParams, ChecksValuesAgainstEachOtherAndTheJob) {
  auto check = [](const std::string& flags, int ranks) {
    check_params(parse(split_words(flags)), ranks);
  };
  EXPECT_NO_THROW(check("--nx 4", 1));
  expect_invalid([&] { check("--nx 3", 1); }, "--nx must be even");
  expect_invalid([&] { check("--nz 0", 1); }, "--nz must be even and > 0");
  expect_invalid([&] { check("--npx 2", 1); }, "--npx * --npy * --npz = 2 but the job has 1 rank");
  expect_invalid([&] { check("--npx 2 --npz 2", 2); }, "= 4 but the job has 2 rank");
  expect_invalid([&] { check("--init_y 0", 1); }, "--init_y must be > 0");
  expect_invalid([&] { check("--num_vars 4 --comm_vars 5", 1); }, "--comm_vars must be in");
  expect_invalid([&] { check("--stencil 9", 1); }, "--stencil must be 7 or 27");
  expect_invalid([&] { check("--stencil 27 --num_refine 1", 1); }, "--stencil 27 needs");
  EXPECT_NO_THROW(check("--stencil 27 --num_refine 1 --uniform_refine 1", 1));
  EXPECT_NO_THROW(check("--stencil 27 --num_refine 0", 1));
  expect_invalid([&] { check("--lb_opt 3", 1); }, "--lb_opt must be");
  expect_invalid([&] { check("--num_objects 1 --object 26 0 0 0 0 0 0 0 1 1 1 0 0 0", 1); },
                 "type 26 is not one of 0..25");
}

}  // namespace
}  // namespace miniamr
