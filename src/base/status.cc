#include "base/status.h"

namespace harvest {
namespace {
const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "ok";
    case Status::Code::kInvalidArgument:
      return "invalid argument";
    case Status::Code::kNotFound:
      return "not found";
    case Status::Code::kCorruption:
      return "corruption";
    case Status::Code::kIOError:
      return "I/O error";
    case Status::Code::kUnavailable:
      return "unavailable";
    case Status::Code::kResourceExhausted:
      return "resource exhausted";
    case Status::Code::kAborted:
      return "aborted";
    case Status::Code::kInternal:
      return "internal error";
  }
  return "unknown";
}
}  // namespace

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace harvest
