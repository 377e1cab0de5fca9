// pgas::init / finalize, the settings and the queries.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "comm/mpi/backend.h"
#include "comm/mpi/family.h"
#include "exec/task_epilogue.h"
#include "pgas/device.h"
#include "pgas/state.h"

namespace taskgrid::pgas {

void complete_task_operations();  // one_sided.cpp

namespace {

State* current = nullptr;

// "256M", "1GiB", "65536", "64k": bytes with an optional binary unit.
size_t parse_bytes(const char* name, const std::string& text) {
  const auto bad = [&] {
    return Error(std::string("pgas::init: ") + name + "='" + text +
                 "': expected a size in bytes with an optional unit k, M or G (e.g. 256M)");
  };
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0) throw bad();
  errno = 0;
  const unsigned long long number = std::strtoull(text.substr(0, i).c_str(), nullptr, 10);
  if (errno == ERANGE) throw bad();
  std::string unit = text.substr(i);
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int shift = 0;
  if (unit.empty() || unit == "b")
    shift = 0;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    shift = 10;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    shift = 20;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    shift = 30;
  else
    throw bad();
  if (number > (SIZE_MAX >> shift)) throw bad();
  return static_cast<size_t>(number) << shift;
}

double parse_seconds(const char* name, const std::string& text) {
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(seconds) || seconds <= 0)
    throw Error(std::string("pgas::init: ") + name + "='" + text +
                "': expected a positive number of seconds");
  return seconds;
}

NcclChoice nccl_choice() {
  const char* text = std::getenv("TASKGRID_NCCL");
  if (!text) return NcclChoice::automatic;
  const std::string value = text;
  if (value == "auto") return NcclChoice::automatic;
  if (value == "yes") return NcclChoice::yes;
  if (value == "no") return NcclChoice::no;
  throw Error("pgas::init: TASKGRID_NCCL='" + value + "': expected auto, yes or no");
}

bool direct_access_enabled() {
  const char* text = std::getenv("TASKGRID_PGAS_SHM");
  if (!text) return true;
  const std::string value = text;
  if (value == "1") return true;
  if (value == "0") return false;
  throw Error("pgas::init: TASKGRID_PGAS_SHM='" + value + "': expected 0 or 1");
}

// Creates the segment windows. With direct access, the node's segments are one
// shared mapping (MPI_Win_allocate_shared) and the job-wide window is created
// over the same memory; otherwise MPI allocates the segment (MPI_Win_allocate).
void allocate_segments(State& s, bool direct) {
  MPI_Info info;
  MPI_Info_create(&info);
  // Lock words see only fetch-and-add and no-op; user atomics are documented likewise.
  MPI_Info_set(info, "accumulate_ops", "same_op_no_op");
  const auto bytes = static_cast<MPI_Aint>(s.segment_bytes);
  s.direct_base.assign(static_cast<size_t>(s.ranks), nullptr);
  int code;
  if (direct) {
    MPI_Comm node;
    MPI_Comm_split_type(s.world_comm, MPI_COMM_TYPE_SHARED, s.rank, MPI_INFO_NULL, &node);
    MPI_Info shared_info;
    MPI_Info_create(&shared_info);
    MPI_Info_set(shared_info, "alloc_shared_noncontig", "true");  // each segment on its own pages
    void* base = nullptr;
    code = MPI_Win_allocate_shared(bytes, 1, shared_info, node, &base, &s.shared_window);
    MPI_Info_free(&shared_info);
    if (code == MPI_SUCCESS) {
      s.base = static_cast<char*>(base);
      int node_size = 0;
      MPI_Comm_size(node, &node_size);
      std::vector<int> node_world_ranks(static_cast<size_t>(node_size));
      MPI_Allgather(&s.rank, 1, MPI_INT, node_world_ranks.data(), 1, MPI_INT, node);
      for (int i = 0; i < node_size; ++i) {
        MPI_Aint size = 0;
        int unit = 0;
        void* peer = nullptr;
        MPI_Win_shared_query(s.shared_window, i, &size, &unit, &peer);
        s.direct_base[static_cast<size_t>(node_world_ranks[static_cast<size_t>(i)])] =
            static_cast<char*>(peer);
      }
      code = MPI_Win_create(base, bytes, 1, info, s.world_comm, &s.window);
    }
    MPI_Comm_free(&node);
  } else {
    void* base = nullptr;
    code = MPI_Win_allocate(bytes, 1, info, s.world_comm, &base, &s.window);
    s.base = static_cast<char*>(base);
  }
  MPI_Info_free(&info);
  check_mpi(code, "pgas::init: allocating the global segment (TASKGRID_PGAS_SEGMENT)");
}

void finalize_mpi_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

State& state(const char* call) {
  if (!current) throw Error(std::string(call) + ": call pgas::init first");
  return *current;
}
State* state_or_null() { return current; }
GroupState& world_group(State& s) { return *s.groups[0]; }

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string(call) + ": MPI error: " + std::string(text, static_cast<size_t>(length)));
}

void prepare_mpi_init() { comm::mpi::prepare_mpi_start(); }

void init(int* argc, char*** argv, size_t segment_bytes) {
  if (current) throw Error("pgas::init: already initialised");
  auto s = std::make_unique<State>();
  // Settings are read before MPI starts, so a bad value fails fast and alone.
  s->segment_bytes = segment_bytes ? segment_bytes : kDefaultSegmentBytes;
  if (const char* text = std::getenv("TASKGRID_PGAS_SEGMENT"))
    s->segment_bytes = parse_bytes("TASKGRID_PGAS_SEGMENT", text);
  if (const char* text = std::getenv("TASKGRID_PGAS_TIMEOUT"))
    s->timeout_seconds = parse_seconds("TASKGRID_PGAS_TIMEOUT", text);
  const bool direct = direct_access_enabled();
  s->nccl_choice = nccl_choice();
  if (s->segment_bytes < kHeaderBytes)
    throw Error("pgas::init: a segment of " + std::to_string(s->segment_bytes) +
                " bytes is smaller than its 64-byte header");

  const comm::mpi::MpiStart start = comm::mpi::start_mpi(argc, argv);
  s->initialized_mpi = start.started_here;
  const int provided = start.thread_level;
  MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s->ranks);
  if (provided < MPI_THREAD_SERIALIZED)
    throw Error("pgas::init: MPI provides thread level " + std::to_string(provided) +
                "; the PGAS layer needs MPI_THREAD_SERIALIZED or more (MPI_THREAD_MULTIPLE "
                "for one-sided calls from tasks)");
  // In cluster mode only rank 0 runs the program: a collective would never complete.
  if (taskgrid::is_running() && !taskgrid::is_spmd() && s->ranks > 1)
    throw Error(
        "pgas::init: the runtime runs in cluster mode, where only rank 0 runs the "
        "program; the PGAS layer needs every rank: use spmd mode (taskgrid::start(&argc, &argv, "
        "taskgrid::Mode::spmd) or taskgrid::RunOptions{taskgrid::Mode::spmd})");

  // Before any window: an unusable one-sided component would crash, not fail.
  if (const std::string problem = comm::mpi::one_sided_problem(); !problem.empty())
    throw Error("pgas::init: " + problem);

  MPI_Comm_dup(MPI_COMM_WORLD, &s->world_comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &s->adhoc_comm);
  MPI_Comm_set_errhandler(s->world_comm, MPI_ERRORS_RETURN);
  MPI_Comm node;
  MPI_Comm_split_type(s->world_comm, MPI_COMM_TYPE_SHARED, s->rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &s->node_rank);
  MPI_Comm_free(&node);
  auto world = std::make_unique<GroupState>();
  world->comm = s->world_comm;
  world->world_ranks.resize(static_cast<size_t>(s->ranks));
  std::iota(world->world_ranks.begin(), world->world_ranks.end(), 0);
  world->my_rank = s->rank;
  world->label = "world";
  world->agreement = std::make_unique<Agreement>(s->world_comm, world->world_ranks,
                                                 world->world_ranks, "world", s->timeout_seconds);
  s->groups.push_back(std::move(world));
  s->allocations = std::make_unique<Allocation[]>(kMaxAllocations);
  s->lock_holders.assign(static_cast<size_t>(s->ranks), std::thread::id{});

  // Every rank must come, with the same segment size: symmetric offsets assume it.
  CallRecord record;
  record.kind = CallKind::init;
  record.args[0] = s->segment_bytes;
  world_group(*s).agreement->agree(record, "pgas::init");

  allocate_segments(*s, direct);
  MPI_Win_set_errhandler(s->window, MPI_ERRORS_RETURN);
  std::memset(s->base, 0, kHeaderBytes);  // lock words start free
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, s->window), "pgas::init");
  // No rank may take a lock before every header is zeroed.
  record.args[1] = 1;
  world_group(*s).agreement->agree(record, "pgas::init");

  current = s.release();
  exec::set_task_epilogue(&complete_task_operations);
}

void finalize() {
  State& s = state("pgas::finalize");
  CallRecord record;
  record.kind = CallKind::finalize;
  world_group(s).agreement->agree(record, "pgas::finalize");
  exec::set_task_epilogue(nullptr);
  finalize_device(s);
  check_mpi(MPI_Win_flush_all(s.window), "pgas::finalize");
  MPI_Win_unlock_all(s.window);
  MPI_Win_free(&s.window);
  if (s.shared_window != MPI_WIN_NULL) MPI_Win_free(&s.shared_window);
  for (size_t i = 1; i < s.groups.size(); ++i)
    if (s.groups[i]->live && s.groups[i]->comm != MPI_COMM_NULL) MPI_Comm_free(&s.groups[i]->comm);
  MPI_Comm_free(&s.adhoc_comm);
  MPI_Comm_free(&s.world_comm);
  const bool finalize_mpi = s.initialized_mpi;
  delete current;
  current = nullptr;
  if (!finalize_mpi) return;
  // The runtime adopted our MPI and still uses it: finalise when the program ends.
  if (taskgrid::is_running()) {
    std::atexit(finalize_mpi_at_exit);
    return;
  }
  MPI_Finalize();
}

bool is_initialized() { return current != nullptr; }
void abort_job(const std::string& message) { fail_job(message); }
int rank() { return state("pgas::rank").rank; }
int num_ranks() { return state("pgas::num_ranks").ranks; }
size_t segment_size() { return state("pgas::segment_size").segment_bytes; }

}  // namespace taskgrid::pgas
