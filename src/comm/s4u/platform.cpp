#include "comm/s4u/platform.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <stdexcept>

namespace taskgrid::comm::s4u {

namespace {

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  const size_t last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw std::runtime_error("platform " + where + ": " + what);
}

double positive_number(const std::string& where, const std::string& key, const std::string& text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
      value <= 0)
    bad(where, key + " = '" + text + "' is not a positive number");
  return value;
}

// Every key a file must give, in the order a missing one is reported.
constexpr const char* kKeys[] = {"name",
                                 "max_nodes",
                                 "cores_per_node",
                                 "core_speed",
                                 "link_bandwidth",
                                 "link_latency",
                                 "message_overhead",
                                 "runtime_task_seconds",
                                 "runtime_submission_seconds",
                                 "runtime_foreign_submission_seconds"};

// The keys whose value is any positive number.
struct NumberKey {
  const char* key;
  double PlatformSpec::*field;
};
constexpr NumberKey kNumbers[] = {
    {"core_speed", &PlatformSpec::core_speed},
    {"link_bandwidth", &PlatformSpec::link_bandwidth},
    {"link_latency", &PlatformSpec::link_latency},
    {"message_overhead", &PlatformSpec::message_overhead},
    {"runtime_task_seconds", &PlatformSpec::runtime_task_seconds},
    {"runtime_submission_seconds", &PlatformSpec::runtime_submission_seconds},
    {"runtime_foreign_submission_seconds", &PlatformSpec::runtime_foreign_submission_seconds}};

std::string known_keys() {
  std::string known;
  for (const char* key : kKeys) known += (known.empty() ? "" : ", ") + std::string(key);
  return known;
}

}  // namespace

PlatformSpec read_platform(const std::string& path) {
  std::ifstream in(path);
  if (!in) bad(path, "cannot read the file");
  PlatformSpec spec;
  spec.file = path;
  std::map<std::string, int> seen;  // key -> line
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number);
    const std::string text = trim(line.substr(0, line.find('#')));
    if (text.empty()) continue;
    const size_t equals = text.find('=');
    if (equals == std::string::npos) bad(where, "'" + text + "' is no 'key = value' line");
    const std::string key = trim(text.substr(0, equals));
    const std::string value = trim(text.substr(equals + 1));
    if (const auto [it, added] = seen.emplace(key, number); !added)
      bad(where, key + " was already given on line " + std::to_string(it->second));
    if (key == "name") {
      if (value.empty()) bad(where, "name is empty");
      spec.name = value;
    } else if (key == "max_nodes" || key == "cores_per_node") {
      const double count = positive_number(where, key, value);
      if (count != std::floor(count) || count > 1 << 20)
        bad(where, key + " = " + value + " is not a whole number up to 2^20");
      (key == "max_nodes" ? spec.max_nodes : spec.cores_per_node) = static_cast<int>(count);
    } else if (const auto numeric =
                   std::find_if(std::begin(kNumbers), std::end(kNumbers),
                                [&](const NumberKey& known) { return key == known.key; });
               numeric != std::end(kNumbers)) {
      spec.*(numeric->field) = positive_number(where, key, value);
    } else {
      bad(where, "unknown key '" + key + "' (known: " + known_keys() + ")");
    }
  }
  for (const char* key : kKeys)
    if (!seen.count(key)) bad(path, std::string("no ") + key + " given");
  return spec;
}

std::vector<std::string> platform_names(const std::string& platform_dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(platform_dir, error))
    if (entry.path().extension() == ".platform") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

PlatformSpec find_platform(const std::string& name_or_path, const std::string& platform_dir) {
  const bool is_path = name_or_path.find('/') != std::string::npos ||
                       std::filesystem::path(name_or_path).extension() == ".platform";
  if (is_path) return read_platform(name_or_path);
  const std::string path = platform_dir + "/" + name_or_path + ".platform";
  if (!std::filesystem::exists(path)) {
    std::string known;
    for (const std::string& name : platform_names(platform_dir))
      known += (known.empty() ? "" : ", ") + name;
    throw std::runtime_error("platform '" + name_or_path + "': no such platform in " +
                             platform_dir + " (known: " + (known.empty() ? "none" : known) + ")");
  }
  return read_platform(path);
}

void check_node_count(const PlatformSpec& spec, int nodes) {
  if (nodes < 1 || nodes > spec.max_nodes)
    throw std::runtime_error("platform " + spec.name + " (" + spec.file + ") has 1 to " +
                             std::to_string(spec.max_nodes) + " nodes: " + std::to_string(nodes) +
                             " asked for");
}

std::vector<simgrid::s4u::Host*> build_platform(const PlatformSpec& spec, int nodes) {
  check_node_count(spec, nodes);
  auto* zone = simgrid::s4u::create_star_zone(spec.name);
  std::vector<simgrid::s4u::Host*> hosts;
  for (int n = 0; n < nodes; ++n) {
    const std::string name = "node-" + std::to_string(n);
    simgrid::s4u::Host* host = zone->create_host(name, spec.core_speed);
    host->set_core_count(spec.cores_per_node)->seal();
    // Each way of a node's link is a link of its own (full duplex).
    simgrid::s4u::SplitDuplexLink* link =
        zone->create_split_duplex_link(name + "-link", spec.link_bandwidth);
    link->set_latency(spec.link_latency)->seal();
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {{link, simgrid::s4u::LinkInRoute::Direction::UP}}, true);
    hosts.push_back(host);
  }
  zone->seal();
  return hosts;
}

}  // namespace taskgrid::comm::s4u
