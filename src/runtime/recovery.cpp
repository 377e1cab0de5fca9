#include "runtime/recovery.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>

#include "core/failure.h"
#include "core/function_registry.h"
#include "plan/planner.h"
#include "runtime/options.h"

namespace taskgrid::runtime {
namespace {

// What a rank's seal task tells rank 0's manifest task (a seal handle's bytes).
struct SealStatus {
  uint64_t checkpoint;
  uint64_t durable;  // 1: the rank's file is written, fsynced and in place
  uint64_t records;
  uint64_t bytes;
  char error[224];
};
static_assert(sizeof(SealStatus) == 256);

struct TaskArgs {
  uint64_t checkpoint;
  uint64_t handle;
};

// This process's part of checkpointing and restarting, shared by the
// program's thread and the checkpoint tasks (any worker thread).
struct Site {
  std::mutex mutex;
  RecoverySettings settings;
  int rank = 0;
  int ranks = 1;
  uint64_t program_hash = 0;
  // Checkpoints being written here, by K.
  std::map<uint64_t, std::unique_ptr<RankFileWriter>> writers;
  // Staged by the program's thread at K for the tasks that follow: this
  // rank's replay log, and (rank 0) the manifest to write.
  std::map<uint64_t, std::vector<RankFileContents::Observation>> logs;
  std::map<uint64_t, Manifest> manifests;
  // The checkpoint restarted from (restart_point 0: none).
  uint64_t restart_point = 0;
  Manifest restart_manifest;
  RankFileContents restart_contents;
};

Site& site() {
  static Site instance;
  return instance;
}

// Caller holds site().mutex.
RankFileWriter& writer_for(Site& s, uint64_t checkpoint) {
  std::unique_ptr<RankFileWriter>& writer = s.writers[checkpoint];
  if (!writer)
    writer = std::make_unique<RankFileWriter>(
        checkpoint_folder(s.settings.checkpoint_dir, checkpoint), s.rank, s.ranks, checkpoint);
  return *writer;
}

TaskArgs args_of(const TaskContext& ctx) { return ctx.arg<TaskArgs>(); }

// Appends the version read (access 0) to this rank's file.
void write_version(TaskContext& ctx) {
  const TaskArgs args = args_of(ctx);
  Site& s = site();
  std::lock_guard lock(s.mutex);
  writer_for(s, args.checkpoint).add_version(args.handle, ctx.data(0), ctx.size(0));
}

// Closes this rank's file (with its replay log) and says how it went.
void seal_rank_file(TaskContext& ctx) {
  const TaskArgs args = args_of(ctx);
  Site& s = site();
  std::unique_lock lock(s.mutex);
  RankFileWriter& writer = writer_for(s, args.checkpoint);
  if (auto log = s.logs.find(args.checkpoint); log != s.logs.end()) {
    for (const RankFileContents::Observation& seen : log->second)
      writer.add_observation(seen.call, seen.handle, seen.bytes.data(), seen.bytes.size());
    s.logs.erase(log);
  }
  SealStatus status{};
  status.checkpoint = args.checkpoint;
  status.durable = writer.seal() ? 1 : 0;
  status.records = writer.records();
  status.bytes = writer.bytes_written();
  std::snprintf(status.error, sizeof status.error, "%s", writer.error().c_str());
  s.writers.erase(args.checkpoint);
  std::memcpy(ctx.data(0), &status, sizeof status);
}

// Rank 0, after every rank's seal: the manifest, when every file is durable;
// then the checkpoints past TASKGRID_CHECKPOINT_KEEP go. A checkpoint that
// failed is removed and the job goes on with the previous one kept.
void write_checkpoint_manifest(TaskContext& ctx) {
  const TaskArgs args = args_of(ctx);
  Site& s = site();
  std::unique_lock lock(s.mutex);
  std::optional<Manifest> manifest;
  if (auto staged = s.manifests.find(args.checkpoint); staged != s.manifests.end()) {
    manifest = std::move(staged->second);
    s.manifests.erase(staged);
  }
  const std::string dir = s.settings.checkpoint_dir;
  const size_t keep = static_cast<size_t>(std::max(1, s.settings.keep));
  lock.unlock();
  std::string failures;
  for (size_t r = 0; r < ctx.num_data(); ++r) {
    SealStatus status{};
    std::memcpy(&status, ctx.data(r), sizeof status);
    if (status.checkpoint == args.checkpoint && status.durable) continue;
    failures += "; rank " + std::to_string(r) + ": " +
                (status.checkpoint == args.checkpoint ? std::string(status.error)
                                                      : std::string("no file sealed"));
  }
  const std::string folder = checkpoint_folder(dir, args.checkpoint);
  if (failures.empty() && !manifest) failures = "; rank 0: no manifest staged";
  if (failures.empty()) {
    const std::string error = write_manifest(folder, *manifest);
    if (!error.empty()) failures = "; rank 0: " + error;
  }
  if (!failures.empty()) {
    remove_checkpoint(dir, args.checkpoint);
    const std::vector<uint64_t> complete = complete_checkpoints(dir);
    std::fprintf(stderr,
                 "warning: taskgrid: rank %d: checkpoint %llu (after %llu submissions) failed%s; "
                 "the job goes on; %s\n",
                 ctx.rank(), static_cast<unsigned long long>(args.checkpoint),
                 static_cast<unsigned long long>(args.checkpoint), failures.c_str(),
                 complete.empty() ? "there is no complete checkpoint"
                                  : ("the previous complete one is kept: " +
                                     checkpoint_folder(dir, complete.back()))
                                        .c_str());
    std::fflush(stderr);
    return;
  }
  const std::vector<uint64_t> complete = complete_checkpoints(dir);
  for (size_t i = 0; i + keep < complete.size(); ++i)
    if (const std::string error = remove_checkpoint(dir, complete[i]); !error.empty())
      std::fprintf(stderr, "warning: taskgrid: rank %d: an old checkpoint stays: %s\n", ctx.rank(),
                   error.c_str());
}

// Writes the checkpointed version of a handle (access 0, out) back.
void restore_version(TaskContext& ctx) {
  const TaskArgs args = args_of(ctx);
  Site& s = site();
  std::lock_guard lock(s.mutex);
  auto found = s.restart_contents.versions.find(args.handle);
  if (found == s.restart_contents.versions.end() || found->second.size() != ctx.size(0))
    core::fail_job(ctx.rank(),
                   "restart: the checkpoint holds no version of handle " +
                       std::to_string(args.handle) + " of " + std::to_string(ctx.size(0)) +
                       " bytes for this rank",
                   2);
  std::memcpy(ctx.data(0), found->second.data(), found->second.size());
  s.restart_contents.versions.erase(found);
}

const FunctionId kWriteVersion =
    register_function("taskgrid.checkpoint.write_version", write_version);
const FunctionId kSealRankFile = register_function("taskgrid.checkpoint.seal", seal_rank_file);
const FunctionId kWriteManifest =
    register_function("taskgrid.checkpoint.manifest", write_checkpoint_manifest);
const FunctionId kRestoreVersion =
    register_function("taskgrid.checkpoint.restore_version", restore_version);

enum CallKind : uint64_t { kEnter = 1, kSubmit, kFetch, kRelease, kWait, kWaitAll };

}  // namespace

std::string prepare_recovery(const RecoverySettings& settings, int rank, int ranks, Mode mode,
                             uint64_t& restart_point) {
  Site& s = site();
  std::lock_guard lock(s.mutex);
  s.settings = settings;
  s.rank = rank;
  s.ranks = ranks;
  s.program_hash = detail::function_table_hash();
  restart_point = 0;
  if (settings.restart_dir.empty()) return "";
  const std::string& dir = settings.restart_dir;
  std::error_code code;
  if (!std::filesystem::is_directory(dir, code))
    return "TASKGRID_RESTART=" + dir + ": no such folder";
  const std::vector<uint64_t> complete = complete_checkpoints(dir);
  if (complete.empty())
    return "TASKGRID_RESTART=" + dir +
           ": no complete checkpoint there (no ckpt-<K>/MANIFEST; a checkpoint is complete only "
           "once every rank's file is durable)";
  const uint64_t checkpoint = complete.back();
  const std::string folder = checkpoint_folder(dir, checkpoint);
  try {
    Manifest manifest = read_manifest(folder);
    const std::string where = "restart from " + folder + ": ";
    if (manifest.checkpoint != checkpoint)
      return where + "its manifest says checkpoint " + std::to_string(manifest.checkpoint);
    if (manifest.ranks != ranks)
      return where + "it is of a job of " + std::to_string(manifest.ranks) +
             " ranks and this job has " + std::to_string(ranks) +
             "; restart with the same number of ranks";
    if (manifest.mode != mode_name(mode))
      return where + "it is of a job in " + manifest.mode + " mode and this one runs in " +
             mode_name(mode) + " mode";
    if (manifest.program_hash != s.program_hash)
      return where +
             "it was written by another program (its registered task functions differ from "
             "this program's)";
    RankFileContents contents = read_rank_file(folder, rank, ranks, checkpoint);
    for (const Manifest::Handle& handle : manifest.handles) {
      if (handle.rank != rank) continue;
      auto found = contents.versions.find(handle.id);
      if (found == contents.versions.end() || found->second.size() != handle.bytes)
        return where + rank_file_name(rank) + " lacks the " + std::to_string(handle.bytes) +
               " bytes of handle " + std::to_string(handle.id) + " that the manifest lists";
    }
    s.restart_manifest = std::move(manifest);
    s.restart_contents = std::move(contents);
  } catch (const Error& error) {
    std::string what = error.what();
    if (what.rfind("taskgrid: ", 0) == 0) what.erase(0, 10);
    return what;
  }
  s.restart_point = checkpoint;
  restart_point = checkpoint;
  return "";
}

Recovery::Recovery(plan::Planner& planner, int rank, int ranks, Mode mode)
    : planner_(planner), rank_(rank), ranks_(ranks), mode_(mode) {
  Site& s = site();
  {
    std::lock_guard lock(s.mutex);
    every_ = s.settings.checkpoint_dir.empty() ? 0 : s.settings.every;
    restart_point_ = s.restart_point;
  }
  if (every_ > 0) next_checkpoint_ = (restart_point_ / every_ + 1) * every_;
  // Made first, before any of the program's handles, on every run alike:
  // the program's handles then get the same ids in a restarted run.
  seal_buffers_.assign(static_cast<size_t>(ranks) * sizeof(SealStatus), 0);
  for (int r = 0; r < ranks; ++r)
    seals_.push_back(planner_.enter_data(seal_buffers_.data() + r * sizeof(SealStatus),
                                         sizeof(SealStatus), mode == Mode::spmd ? r : -1));
}

void Recovery::mix(uint64_t word) { mix_bytes(&word, sizeof word); }

void Recovery::mix_bytes(const void* data, size_t bytes) {
  const auto* at = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) sequence_hash_ = (sequence_hash_ ^ at[i]) * 1099511628211ull;
}

bool Recovery::begin(uint64_t kind, uint64_t a, uint64_t b) {
  if (restart_point_ > 0 && calls_ == restart_point_) {
    restore();
  } else if (every_ > 0 && calls_ >= next_checkpoint_ && !after_channel_task_ &&
             calls_ > restart_point_) {
    take_checkpoint(calls_);
    next_checkpoint_ = (calls_ / every_ + 1) * every_;
  }
  after_channel_task_ = false;
  ++calls_;
  mix(kind);
  mix(a);
  mix(b);
  return calls_ > restart_point_;
}

void Recovery::diverged(const std::string& what) const {
  throw Error("taskgrid: restart from " +
              checkpoint_folder(site().settings.restart_dir, restart_point_) + ": " + what +
              "; the restarted program must make the same calls as the run that wrote the "
              "checkpoint (same program, arguments and input)");
}

bool Recovery::entering(size_t bytes, int owner) {
  return begin(kEnter, bytes, static_cast<uint64_t>(static_cast<int64_t>(owner)));
}

void Recovery::entered(DataHandle handle, void* host, size_t bytes) {
  live_[handle.id] = Live{host, bytes, planner_.owner(handle)};
}

bool Recovery::submitting(FunctionId function, const DataAccess* accesses, size_t count,
                          const void* args, size_t args_size, int channel) {
  const bool goes_on = begin(kSubmit, function.value, count);
  after_channel_task_ = channel >= 0;
  for (size_t i = 0; i < count; ++i)
    mix(accesses[i].handle.id << 2 | static_cast<uint64_t>(accesses[i].mode));
  mix(args_size);
  mix_bytes(args, args_size);
  return goes_on;
}

bool Recovery::receives_here(uint64_t handle, int to) const {
  if (mode_ != Mode::spmd) return true;  // cluster: only rank 0 runs the program
  if (to == plan::Planner::kAllRanks) return true;
  if (to == plan::Planner::kHome) {
    auto found = live_.find(handle);
    return found != live_.end() && found->second.owner == rank_;
  }
  return to == rank_;
}

bool Recovery::fetching(DataHandle handle, int to, bool release) {
  if (begin(kFetch, handle.id, static_cast<uint64_t>(static_cast<int64_t>(to)))) return true;
  // Replayed: the bytes the first run's fetch returned, from the log.
  if (receives_here(handle.id, to)) {
    const std::vector<RankFileContents::Observation>& log = site().restart_contents.observations;
    auto live = live_.find(handle.id);
    if (replayed_ >= log.size() || log[replayed_].call != calls_ ||
        log[replayed_].handle != handle.id || live == live_.end() ||
        log[replayed_].bytes.size() != live->second.bytes)
      diverged("submission " + std::to_string(calls_) + " fetches handle " +
               std::to_string(handle.id) + ", which the checkpoint's replay log does not have");
    if (live->second.host)
      std::memcpy(live->second.host, log[replayed_].bytes.data(), log[replayed_].bytes.size());
    observations_.push_back(log[replayed_]);
    ++replayed_;
  }
  if (release) live_.erase(handle.id);
  return false;
}

void Recovery::fetched(DataHandle handle, int to, bool release) {
  if (receives_here(handle.id, to)) {
    const Live& live = live_.at(handle.id);
    const char* host = static_cast<const char*>(live.host);
    observations_.push_back(
        {calls_, handle.id,
         host ? std::vector<char>(host, host + live.bytes) : std::vector<char>()});
  }
  if (release) live_.erase(handle.id);
}

void Recovery::releasing(DataHandle handle) {
  begin(kRelease, handle.id, 0);
  live_.erase(handle.id);
}

bool Recovery::waiting(uint64_t handle_or_zero) {
  return begin(handle_or_zero ? kWait : kWaitAll, handle_or_zero, 0);
}

void Recovery::finishing() {
  if (restart_point_ == 0 || calls_ > restart_point_) return;
  if (calls_ < restart_point_)
    diverged("the program made " + std::to_string(calls_) +
             " submissions and the checkpoint covers " + std::to_string(restart_point_));
  if (sequence_hash_ != site().restart_manifest.sequence_hash)
    diverged("its first " + std::to_string(restart_point_) + " submissions differ");
}

void Recovery::take_checkpoint(uint64_t checkpoint) {
  Site& s = site();
  std::vector<uint64_t> ids;
  ids.reserve(live_.size());
  for (const auto& [id, live] : live_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  Manifest manifest;
  manifest.checkpoint = checkpoint;
  manifest.ranks = ranks_;
  manifest.mode = mode_name(mode_);
  manifest.program_hash = s.program_hash;
  manifest.sequence_hash = sequence_hash_;
  for (uint64_t id : ids)
    manifest.handles.push_back({id, live_.at(id).bytes, planner_.holder(DataHandle{id})});
  {
    std::lock_guard lock(s.mutex);
    s.logs[checkpoint] = observations_;
    if (rank_ == 0) s.manifests[checkpoint] = manifest;
  }
  const TaskArgs args{checkpoint, 0};
  TaskOptions options;
  // Written first among the ready tasks: the version it keeps alive goes sooner.
  options.priority = 1;
  for (const Manifest::Handle& handle : manifest.handles) {
    options.rank = handle.rank;
    options.name = "checkpoint_write";
    const TaskArgs write{checkpoint, handle.id};
    const DataAccess accesses[] = {in(DataHandle{handle.id}),
                                   inout(seals_[static_cast<size_t>(handle.rank)])};
    planner_.submit(kWriteVersion, accesses, 2, options, &write, sizeof write);
  }
  for (int r = 0; r < ranks_; ++r) {
    options.rank = r;
    options.name = "checkpoint_seal";
    const DataAccess access = inout(seals_[static_cast<size_t>(r)]);
    planner_.submit(kSealRankFile, &access, 1, options, &args, sizeof args);
  }
  std::vector<DataAccess> all{inout(seals_[0])};
  for (int r = 1; r < ranks_; ++r) all.push_back(in(seals_[static_cast<size_t>(r)]));
  options.rank = 0;
  options.name = "checkpoint_manifest";
  planner_.submit(kWriteManifest, all.data(), all.size(), options, &args, sizeof args);
}

void Recovery::restore() {
  const Manifest& manifest = site().restart_manifest;
  if (sequence_hash_ != manifest.sequence_hash)
    diverged("its first " + std::to_string(restart_point_) + " submissions differ");
  bool same = live_.size() == manifest.handles.size();
  for (const Manifest::Handle& handle : manifest.handles) {
    auto live = live_.find(handle.id);
    same = same && live != live_.end() && live->second.bytes == handle.bytes;
  }
  if (!same)
    diverged("after " + std::to_string(restart_point_) + " submissions it has " +
             std::to_string(live_.size()) + " live handles and the checkpoint " +
             std::to_string(manifest.handles.size()) + ", or their sizes differ");
  TaskOptions options;
  options.name = "checkpoint_restore";
  options.priority = 1;
  for (const Manifest::Handle& handle : manifest.handles) {
    options.rank = handle.rank;
    const TaskArgs args{restart_point_, handle.id};
    const DataAccess access = out(DataHandle{handle.id});
    planner_.submit(kRestoreVersion, &access, 1, options, &args, sizeof args);
  }
}

}  // namespace taskgrid::runtime
