#include "pgas/agreement.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "core/failure.h"

namespace taskgrid::pgas {
namespace {

constexpr int kRecordTag = 31313;
constexpr int kVerdictTag = 31314;
// A member waits this much longer than the root, so that when only the root
// can name the missing ranks, its message is the one the user reads.
constexpr double kMemberGraceSeconds = 2.0;

enum class VerdictStatus : uint32_t { agreed = 1, mismatch = 2 };

struct Verdict {
  VerdictStatus status = VerdictStatus::agreed;
  int32_t disagreeing_rank = -1;  // world rank, for a mismatch
  AgreedValues values;
};

bool mpi_is_up() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

// Before MPI starts (a bad setting) the launcher's variable still names the rank.
int world_rank() {
  int rank = -1;
  if (mpi_is_up()) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  } else if (const char* pmi = std::getenv("PMI_RANK")) {
    rank = std::atoi(pmi);
  } else if (const char* ompi = std::getenv("OMPI_COMM_WORLD_RANK")) {
    rank = std::atoi(ompi);
  }
  return rank;
}

std::string describe_record(const CallRecord& record) {
  std::ostringstream out;
  out << call_name(record.kind) << " (call #" << record.sequence << ", arguments";
  for (uint64_t arg : record.args) out << ' ' << arg;
  out << ')';
  return out.str();
}

bool same_call(const CallRecord& a, const CallRecord& b) {
  return a.kind == b.kind && a.sequence == b.sequence &&
         std::equal(std::begin(a.args), std::end(a.args), std::begin(b.args));
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

}  // namespace

const char* call_name(CallKind kind) {
  switch (kind) {
    case CallKind::init:
      return "pgas::init";
    case CallKind::finalize:
      return "pgas::finalize";
    case CallKind::alloc:
      return "pgas::alloc";
    case CallKind::alloc_asymmetric:
      return "pgas::alloc_asymmetric";
    case CallKind::alloc_asymmetric_publish:
      return "pgas::alloc_asymmetric (publish)";
    case CallKind::free:
      return "pgas::free";
    case CallKind::barrier:
      return "pgas::barrier";
    case CallKind::broadcast:
      return "pgas::broadcast";
    case CallKind::reduce:
      return "pgas::reduce";
    case CallKind::allreduce:
      return "pgas::allreduce";
    case CallKind::create_group:
      return "pgas::create_group";
    case CallKind::split:
      return "pgas::split";
    case CallKind::merge:
      return "pgas::merge";
    case CallKind::free_group:
      return "pgas::free_group";
    case CallKind::device_broadcast:
      return "pgas::device_broadcast";
    case CallKind::device_allreduce:
      return "pgas::device_allreduce";
    case CallKind::device_path:
      return "pgas::device collective path choice";
  }
  return "pgas::(unknown call)";
}

void fail_job(const std::string& message) {
  std::fprintf(stderr, "error: taskgrid: rank %d: %s\n", world_rank(), message.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  // MPICH's launcher may drop output it has not forwarded when the job is
  // torn down: give the message a moment to get out.
  if (!mpi_is_up()) std::_Exit(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  core::start_abort_deadline(world_rank(), 1);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

void back_off(uint64_t idle_rounds, double idle_seconds) {
  constexpr double kYieldSeconds = 0.5;  // then a long wait: sleep between polls
  if (idle_rounds < 256) return;         // spin: the answer is usually microseconds away
  if (idle_seconds < kYieldSeconds) {
    sched_yield();
    return;
  }
  std::this_thread::sleep_for(std::chrono::microseconds(50));
}

Agreement::Agreement(MPI_Comm comm, std::vector<int> members, std::vector<int> world_ranks,
                     std::string label, double timeout_seconds)
    : comm_(comm),
      members_(std::move(members)),
      world_ranks_(std::move(world_ranks)),
      label_(std::move(label)),
      timeout_seconds_(timeout_seconds) {
  int me = -1;
  MPI_Comm_rank(comm_, &me);
  for (size_t i = 0; i < members_.size(); ++i)
    if (members_[i] == me) my_index_ = static_cast<int>(i);
}

AgreedValues Agreement::agree(CallRecord record, const std::string& description) {
  if (my_index_ < 0) fail_job(description + ": this rank is not a member of " + label_);
  record.sequence = ++sequence_;
  if (members_.size() == 1) {
    const int me = world_ranks_[0];
    return AgreedValues{record.reduced, me, record.reduced, me};
  }
  return my_index_ == 0 ? run_root(record, description) : run_member(record, description);
}

AgreedValues Agreement::run_root(const CallRecord& mine, const std::string& description) {
  const size_t n = members_.size();
  std::vector<CallRecord> records(n);
  std::vector<MPI_Request> requests(n, MPI_REQUEST_NULL);
  records[0] = mine;
  for (size_t i = 1; i < n; ++i)
    MPI_Irecv(&records[i], sizeof(CallRecord), MPI_BYTE, members_[i], kRecordTag, comm_,
              &requests[i]);
  const double deadline = MPI_Wtime() + timeout_seconds_;
  const bool all_joined = poll_until(
      [&] {
        int done = 0;
        MPI_Testall(static_cast<int>(n), requests.data(), &done, MPI_STATUSES_IGNORE);
        return done != 0;
      },
      deadline);
  if (!all_joined) {
    std::vector<int> missing;
    for (size_t i = 1; i < n; ++i) {
      int done = 0;
      MPI_Test(&requests[i], &done, MPI_STATUS_IGNORE);
      if (!done) missing.push_back(world_ranks_[i]);
    }
    std::ostringstream out;
    out << description << " (" << label_ << ", call #" << mine.sequence << "): rank"
        << (missing.size() > 1 ? "s " : " ") << rank_list(missing) << " did not join within "
        << timeout_seconds_ << " s (TASKGRID_PGAS_TIMEOUT); every member must make the same "
        << "collective calls in the same order";
    fail_job(out.str());
  }

  Verdict verdict;
  verdict.values = {mine.reduced, world_ranks_[0], mine.reduced, world_ranks_[0]};
  size_t disagreeing = 0;
  for (size_t i = 1; i < n; ++i) {
    if (!same_call(records[i], mine)) {
      if (disagreeing == 0) disagreeing = i;
      continue;
    }
    if (records[i].reduced < verdict.values.min)
      verdict.values.min = records[i].reduced, verdict.values.min_rank = world_ranks_[i];
    if (records[i].reduced > verdict.values.max)
      verdict.values.max = records[i].reduced, verdict.values.max_rank = world_ranks_[i];
  }
  if (disagreeing) {
    verdict.status = VerdictStatus::mismatch;
    verdict.disagreeing_rank = world_ranks_[disagreeing];
  }
  for (size_t i = 1; i < n; ++i)
    MPI_Isend(&verdict, sizeof(Verdict), MPI_BYTE, members_[i], kVerdictTag, comm_, &requests[i]);
  if (disagreeing) {
    std::ostringstream out;
    out << "the members of " << label_ << " disagree on a collective call: rank " << world_ranks_[0]
        << " called " << describe_record(mine) << " but rank " << world_ranks_[disagreeing]
        << " called " << describe_record(records[disagreeing]);
    // The verdicts are small (eager): give them a moment to leave, then stop.
    poll_until(
        [&] {
          int done = 0;
          MPI_Testall(static_cast<int>(n), requests.data(), &done, MPI_STATUSES_IGNORE);
          return done != 0;
        },
        MPI_Wtime() + 1.0);
    fail_job(out.str());
  }
  const bool sent = poll_until(
      [&] {
        int done = 0;
        MPI_Testall(static_cast<int>(n), requests.data(), &done, MPI_STATUSES_IGNORE);
        return done != 0;
      },
      MPI_Wtime() + timeout_seconds_ + kMemberGraceSeconds);
  if (!sent) fail_job(description + " (" + label_ + "): a member did not take the verdict");
  return verdict.values;
}

AgreedValues Agreement::run_member(const CallRecord& mine, const std::string& description) {
  MPI_Request requests[2];
  Verdict verdict;
  MPI_Isend(&mine, sizeof(CallRecord), MPI_BYTE, members_[0], kRecordTag, comm_, &requests[0]);
  MPI_Irecv(&verdict, sizeof(Verdict), MPI_BYTE, members_[0], kVerdictTag, comm_, &requests[1]);
  const bool answered = poll_until(
      [&] {
        int done = 0;
        MPI_Testall(2, requests, &done, MPI_STATUSES_IGNORE);
        return done != 0;
      },
      MPI_Wtime() + timeout_seconds_ + kMemberGraceSeconds);
  if (!answered) {
    std::ostringstream out;
    out << description << " (" << label_ << ", call #" << mine.sequence << "): rank "
        << world_ranks_[0] << ", the root of the check, did not answer within "
        << timeout_seconds_ + kMemberGraceSeconds
        << " s (TASKGRID_PGAS_TIMEOUT); every member must make the same collective calls in "
           "the same order";
    fail_job(out.str());
  }
  if (verdict.status != VerdictStatus::agreed) {
    std::ostringstream out;
    out << description << " (" << label_ << ", call #" << mine.sequence
        << "): the members disagree on the call (rank " << verdict.disagreeing_rank
        << " made another); rank " << world_ranks_[0] << " names both calls";
    fail_job(out.str());
  }
  return verdict.values;
}

}  // namespace taskgrid::pgas
