// The outcome names of the code (kOutcomeNames) and of the docs (docs/crawling.md's outcome
// table) are the same set, spelled the same way.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "crawl/outcome_log.h"
#include "frontier/admission.h"

namespace harvest::crawl {
namespace {

// Backquoted names in the first column of the table that follows "| outcome | meaning |".
std::set<std::string> DocumentedOutcomes(const std::string& markdown) {
  std::set<std::string> names;
  std::istringstream in(markdown);
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("| outcome |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.empty() || line[0] != '|') break;
    const std::string first = line.substr(0, line.find('|', 1));
    for (size_t open = first.find('`'); open != std::string::npos;) {
      const size_t close = first.find('`', open + 1);
      if (close == std::string::npos) break;
      names.insert(first.substr(open + 1, close - open - 1));
      open = first.find('`', close + 1);
    }
  }
  return names;
}

TEST(OutcomeNames, DocsListExactlyTheCodesOutcomes) {
  const char* root = std::getenv("HARVEST_SOURCE_DIR");
  ASSERT_NE(root, nullptr) << "run through ctest (HARVEST_SOURCE_DIR)";
  std::ifstream f(std::string(root) + "/docs/crawling.md");
  ASSERT_TRUE(f.good());
  std::stringstream text;
  text << f.rdbuf();
  const std::set<std::string> documented = DocumentedOutcomes(text.str());
  const std::set<std::string> code(kOutcomeNames.begin(), kOutcomeNames.end());
  EXPECT_EQ(documented, code);
}

TEST(OutcomeNames, TrapVerdictsAreOutcomeNames) {
  using frontier::AdmitVerdict;
  for (AdmitVerdict v : {AdmitVerdict::kTrapLongUrl, AdmitVerdict::kTrapManyParams,
                         AdmitVerdict::kTrapRepeatedSegment, AdmitVerdict::kTrapBacklogCap}) {
    EXPECT_TRUE(IsOutcomeName(frontier::VerdictName(v))) << frontier::VerdictName(v);
  }
  // A deferred URL has no outcome yet: it is admitted later.
  EXPECT_FALSE(IsOutcomeName(frontier::VerdictName(AdmitVerdict::kDeferredRatio)));
  EXPECT_FALSE(IsOutcomeName(frontier::VerdictName(AdmitVerdict::kDeferredQuota)));
  EXPECT_FALSE(IsOutcomeName("trap_backlog_cap"));
}

}  // namespace
}  // namespace harvest::crawl
