// The task graph record and its DOT text (src/trace/task_graph.h), alone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace/task_graph.h"

namespace taskgrid::trace {
namespace {

TEST(TraceGraph, DotEscapesLabelsAndKeepsValidUtf8) {
  const std::vector<TaskNode> tasks = {{1, "say \"hi\" \\ now", 0}, {2, "bad \xff\xc3", -1}};
  const std::vector<TaskEdge> edges = {{1, 2, 7}};
  const std::string dot = dot_text(tasks, edges, 10);
  EXPECT_NE(dot.find(R"(t1 [label="say \"hi\" \\ now\n#1\nrank 0"];)"), std::string::npos) << dot;
  EXPECT_NE(dot.find("t2 [label=\"bad \xEF\xBF\xBD\xEF\xBF\xBD\\n#2\"];"), std::string::npos)
      << dot;
  EXPECT_NE(dot.find(R"(t1 -> t2 [label="h7"];)"), std::string::npos) << dot;
  EXPECT_EQ(dot.rfind("digraph taskgrid {", 0), 0u);
}

TEST(TraceGraph, LargeGraphsAreCutWithTheirEdges) {
  const std::vector<TaskNode> tasks = {{1, "a", 0}, {2, "b", 0}, {3, "c", 0}};
  const std::vector<TaskEdge> edges = {{1, 2, 1}, {2, 3, 1}};
  const std::string dot = dot_text(tasks, edges, 2);
  EXPECT_NE(dot.find("1 of 3 tasks left out"), std::string::npos) << dot;
  EXPECT_NE(dot.find("t1 -> t2"), std::string::npos);
  EXPECT_EQ(dot.find("t3"), std::string::npos);
}

TEST(TraceGraph, ValidUtf8KeepsGoodSequencesOnly) {
  EXPECT_EQ(valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(valid_utf8("\xc0\xaf"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(valid_utf8("ok\xe2\x82"), "ok\xEF\xBF\xBD\xEF\xBF\xBD");              // cut short
}

}  // namespace
}  // namespace taskgrid::trace
