"""instructions.py's split of a thread's instructions into work and idle waits,
on listings in callgrind_annotate's format (valgrind is not needed)."""
import importlib.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location(
    "instructions", os.path.join(_HERE, "..", "instructions.py"))
instructions = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(instructions)

LISTING = """\
--------------------------------------------------------------------------------
Ir                   file:function
--------------------------------------------------------------------------------
12,000 (50.00%)  < ???:taskgrid::engine::Engine::run() (30x) [/bin/x]
 2,000 ( 8.00%)  < ???:taskgrid::engine::Engine::drive_until(std::function<bool ()> const&) (1,200x) [/bin/x]
14,000 (58.00%)  *  ???:taskgrid::comm::mpi::MpiTransport::idle(taskgrid::comm::IdleBackoff&, taskgrid::comm::Wakeup&, bool) [/bin/x]
   500 ( 2.00%)  >   ???:sched_yield (40x) [/lib/libc.so.6]

 9,000 (37.00%)  < ???:taskgrid::engine::Engine::run() (7x) [/bin/x]
 9,000 (37.00%)  *  ???:taskgrid::engine::Engine::progress(bool) [/bin/x]

   300 ( 1.00%)  < ???:taskgrid::engine::Engine::run() (3x) [/bin/x]
   300 ( 1.00%)  *  ???:taskgrid::comm::Transport::sleep_ns(unsigned long) [/bin/x]

   100 ( 0.40%)  < ???:taskgrid::exec::WorkerPool<taskgrid::engine::Task>::worker() (2x) [/bin/x]
   100 ( 0.40%)  *  ???:taskgrid::comm::Condition::wait(std::unique_lock<taskgrid::comm::FutexLock>&) [/bin/x]
"""


def test_idle_waits_are_the_inclusive_costs_and_calls_of_the_wait_functions():
    count = instructions.count_idle_waits(LISTING)
    assert count.idle == 14_000 + 300 + 100
    assert count.idle_waits == 30 + 1_200 + 3 + 2


def test_a_pass_is_work_and_its_callers_do_not_count_towards_the_next_wait():
    count = instructions.count_idle_waits(LISTING.split("\n\n")[1])
    assert count.idle == 0 and count.idle_waits == 0


def test_counts_subtract_run_by_run():
    high = instructions.Count(total=5_000, idle=700, idle_waits=9)
    low = instructions.Count(total=2_000, idle=400, idle_waits=4)
    difference = high - low
    assert (difference.total, difference.idle, difference.idle_waits) == (3_000, 300, 5)
