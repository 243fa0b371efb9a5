// The WHATWG named character reference table (internal; generated into named_entities.cc).
#pragma once

#include <cstddef>

namespace harvest::extract::internal {

struct NamedEntity {
  const char* name;   // without the '&'; with the ';' unless it is a legacy form
  const char* value;  // UTF-8
};

// Sorted bytewise by name.
extern const NamedEntity kNamedEntities[];
extern const size_t kNamedEntityCount;

}  // namespace harvest::extract::internal
