// Reply conversion from hiredis, RESP sizes, scripts (redis.h).
#include <hiredis/hiredis.h>
#include <openssl/sha.h>

#include <string>

#include "redis/connection.h"
#include "redis/redis.h"

namespace harvest::redis {
namespace {

size_t Digits(int64_t v) { return std::to_string(v).size(); }

// "$<len>\r\n<bytes>\r\n"
size_t BulkSize(size_t len) { return 1 + Digits(static_cast<int64_t>(len)) + 2 + len + 2; }

std::string Cut(const std::string& s) {
  if (s.size() <= 64) return s;
  return s.substr(0, 64) + "...";
}

}  // namespace

std::string Reply::DebugString() const {
  switch (type) {
    case Type::kNil:
      return "nil";
    case Type::kStatus:
      return "status:" + Cut(str);
    case Type::kError:
      return "error:" + Cut(str);
    case Type::kInteger:
      return "integer:" + std::to_string(integer);
    case Type::kString:
      return "string:" + Cut(str);
    case Type::kArray: {
      std::string out = "array[" + std::to_string(elements.size()) + "]{";
      for (size_t i = 0; i < elements.size(); ++i) {
        if (i > 0) out += ",";
        if (i == 8) {
          out += "...";
          break;
        }
        out += elements[i].DebugString();
      }
      return out + "}";
    }
  }
  return "?";
}

Reply ConvertReply(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::kError;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::kArray;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(ConvertReply(r->element[i]));
      break;
    default:  // REDIS_REPLY_NIL
      out.type = Reply::Type::kNil;
      break;
  }
  return out;
}

size_t CommandSize(const Argv& argv) {
  size_t n = 1 + Digits(static_cast<int64_t>(argv.size())) + 2;  // "*<argc>\r\n"
  for (const std::string& a : argv) n += BulkSize(a.size());
  return n;
}

size_t ReplySize(const Reply& reply) {
  switch (reply.type) {
    case Reply::Type::kNil:
      return 5;  // "$-1\r\n"
    case Reply::Type::kStatus:
    case Reply::Type::kError:
      return 1 + reply.str.size() + 2;
    case Reply::Type::kInteger:
      return 1 + Digits(reply.integer) + 2;
    case Reply::Type::kString:
      return BulkSize(reply.str.size());
    case Reply::Type::kArray: {
      size_t n = 1 + Digits(static_cast<int64_t>(reply.elements.size())) + 2;
      for (const Reply& e : reply.elements) n += ReplySize(e);
      return n;
    }
  }
  return 0;
}

Script::Script(std::string body_in) : body(std::move(body_in)) {
  unsigned char md[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(body.data()), body.size(), md);
  static constexpr char kHex[] = "0123456789abcdef";
  sha1.reserve(2 * SHA_DIGEST_LENGTH);
  for (unsigned char b : md) {
    sha1 += kHex[b >> 4];
    sha1 += kHex[b & 0xf];
  }
}

Request Eval(const Script& s, const std::vector<std::string>& keys,
             const std::vector<std::string>& args) {
  Request r;
  r.argv.reserve(3 + keys.size() + args.size());
  r.argv.push_back("EVALSHA");
  r.argv.push_back(s.sha1);
  r.argv.push_back(std::to_string(keys.size()));
  r.argv.insert(r.argv.end(), keys.begin(), keys.end());
  r.argv.insert(r.argv.end(), args.begin(), args.end());
  r.key = keys.empty() ? -1 : 3;
  return r;
}

}  // namespace harvest::redis
