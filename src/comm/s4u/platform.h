// A simulated machine for the S4U backend, read from a platform file: nodes
// of `cores_per_node` cores at `core_speed` FLOP/s, each on its own link of
// `link_bandwidth` B/s and `link_latency` s to one switch (a star: every
// message crosses the sender's link and the receiver's), at most `max_nodes`
// of them; and what the runtime's own work costs on such a core. The file is
// `key = value` lines; `#` starts a comment (where the numbers come from
// belongs there).
#pragma once

#include <string>
#include <vector>

namespace simgrid::s4u {
class Host;
}

namespace taskgrid::comm::s4u {

struct PlatformSpec {
  std::string name;  // what the file calls itself
  std::string file;  // where it was read from
  int max_nodes = 0;
  int cores_per_node = 0;
  double core_speed = 0;      // FLOP/s of one core
  double link_bandwidth = 0;  // B/s of a node's link, each way
  double link_latency = 0;    // s across one link
  // The MPI library's software overhead per message, charged to the sender
  // and again to the receiver (SMPI's smpi/os and smpi/or).
  double message_overhead = 0;
  // The runtime's own work on one of these cores (the simulator's cost
  // model), in seconds: per task a rank runs (engine), per task its program
  // submits that it runs (planner), and per task submitted that another rank
  // runs (a spmd rank plans every task, and does less for another's).
  double runtime_task_seconds = 0;
  double runtime_submission_seconds = 0;
  double runtime_foreign_submission_seconds = 0;
};

// Reads a platform file. A missing file, an unknown or repeated key, a value
// that is no positive number, or a missing key throws std::runtime_error
// naming the file and line.
PlatformSpec read_platform(const std::string& path);
// `name_or_path`: a file (it holds a '/' or ends in ".platform"), else the
// name of one of the tree's platforms in `platform_dir` (NAME.platform);
// an unknown name lists the known ones in its error.
PlatformSpec find_platform(const std::string& name_or_path, const std::string& platform_dir);
// The names of the platforms in `platform_dir`, sorted.
std::vector<std::string> platform_names(const std::string& platform_dir);

// Builds `nodes` of `spec`'s nodes in the current SimGrid engine (before it
// runs): hosts "node-0" .. "node-<nodes-1>". A node count outside
// 1..max_nodes throws std::runtime_error naming both.
std::vector<simgrid::s4u::Host*> build_platform(const PlatformSpec& spec, int nodes);
// The check build_platform makes first, without a SimGrid engine.
void check_node_count(const PlatformSpec& spec, int nodes);

}  // namespace taskgrid::comm::s4u
