// Url value type: percent-encode tables, the record serializer and small accessors.
#include <array>
#include <charconv>

#include "url/internal.h"

namespace harvest::url {
namespace {

constexpr std::array<uint8_t, 256> MakeEncodeTable() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    bool c0 = c < 0x20 || c > 0x7E;
    bool fragment = c0 || c == ' ' || c == '"' || c == '<' || c == '>' || c == '`';
    bool query = c0 || c == ' ' || c == '"' || c == '#' || c == '<' || c == '>';
    bool special_query = query || c == '\'';
    bool path = query || c == '?' || c == '^' || c == '`' || c == '{' || c == '}';
    bool userinfo = path || c == '/' || c == ':' || c == ';' || c == '=' || c == '@' || c == '[' ||
                    c == '\\' || c == ']' || c == '|';
    t[c] = static_cast<uint8_t>((c0 ? kC0ControlSet : 0) | (fragment ? kFragmentSet : 0) |
                                (query ? kQuerySet : 0) | (special_query ? kSpecialQuerySet : 0) |
                                (path ? kPathSet : 0) | (userinfo ? kUserinfoSet : 0));
  }
  return t;
}

constexpr std::array<uint8_t, 256> kTable = MakeEncodeTable();

}  // namespace

const uint8_t kEncodeTable[256] = {
#define R(i) kTable[i], kTable[i + 1], kTable[i + 2], kTable[i + 3]
#define R16(i) R(i), R(i + 4), R(i + 8), R(i + 12)
    R16(0),   R16(16),  R16(32),  R16(48),  R16(64),  R16(80),  R16(96),  R16(112),
    R16(128), R16(144), R16(160), R16(176), R16(192), R16(208), R16(224), R16(240),
#undef R16
#undef R
};

void Record::Clear() {
  scheme.clear();
  username.clear();
  password.clear();
  host.clear();
  has_host = false;
  port = -1;
  path.clear();
  opaque_path = false;
  query.clear();
  has_query = false;
  fragment.clear();
  has_fragment = false;
}

int DefaultPort(std::string_view scheme) {
  switch (scheme.size()) {
    case 2:
      return scheme == "ws" ? 80 : -1;
    case 3:
      return scheme == "ftp" ? 21 : scheme == "wss" ? 443 : -1;
    case 4:
      return scheme == "http" ? 80 : -1;
    case 5:
      return scheme == "https" ? 443 : -1;
    default:
      return -1;
  }
}

bool IsSpecialScheme(std::string_view scheme) {
  return DefaultPort(scheme) != -1 || scheme == "file";
}

Url Builder::Serialize(const Record& r) {
  Url u;
  std::string& out = u.href_;
  size_t need = r.scheme.size() + r.username.size() + r.password.size() + r.host.size() +
                r.path.size() + r.query.size() + r.fragment.size() + 16;
  out.reserve(need);
  out.append(r.scheme);
  u.scheme_end_ = static_cast<uint32_t>(out.size());
  out.push_back(':');
  u.special_ = IsSpecialScheme(r.scheme);
  u.has_host_ = r.has_host;
  u.port_ = r.port;
  if (r.has_host) {
    out.append("//");
    u.username_begin_ = static_cast<uint32_t>(out.size());
    bool userinfo = !r.username.empty() || !r.password.empty();
    if (userinfo) {
      out.append(r.username);
      u.username_end_ = static_cast<uint32_t>(out.size());
      if (!r.password.empty()) {
        out.push_back(':');
        u.password_begin_ = static_cast<uint32_t>(out.size());
        out.append(r.password);
      } else {
        u.password_begin_ = static_cast<uint32_t>(out.size());
      }
      u.password_end_ = static_cast<uint32_t>(out.size());
      out.push_back('@');
    } else {
      u.username_end_ = u.password_begin_ = u.password_end_ = u.username_begin_;
    }
    u.host_begin_ = static_cast<uint32_t>(out.size());
    out.append(r.host);
    u.host_end_ = static_cast<uint32_t>(out.size());
    if (r.port >= 0) {
      char buf[8] = {':'};
      const std::to_chars_result end = std::to_chars(buf + 1, buf + sizeof buf, r.port);
      out.append(buf, static_cast<size_t>(end.ptr - buf));
    }
    u.port_end_ = static_cast<uint32_t>(out.size());
    if (userinfo) {
      u.origin_.assign(out, 0, u.scheme_end_ + 3);
      u.origin_.append(out, u.host_begin_, u.port_end_ - u.host_begin_);
    }
  } else {
    uint32_t p = static_cast<uint32_t>(out.size());
    u.username_begin_ = u.username_end_ = u.password_begin_ = u.password_end_ = p;
    u.host_begin_ = u.host_end_ = u.port_end_ = p;
    if (!r.opaque_path && r.path.size() > 1 && r.path[0] == '/' && r.path[1] == '/') {
      out.append("/.");
    }
  }
  u.opaque_path_ = r.opaque_path;
  u.path_begin_ = static_cast<uint32_t>(out.size());
  out.append(r.path);
  u.path_end_ = static_cast<uint32_t>(out.size());
  if (r.has_query) {
    out.push_back('?');
    u.query_begin_ = static_cast<uint32_t>(out.size());
    out.append(r.query);
    u.query_end_ = static_cast<uint32_t>(out.size());
  } else {
    u.query_begin_ = 0;
    u.query_end_ = u.path_end_;
  }
  if (r.has_fragment) {
    out.push_back('#');
    u.fragment_begin_ = static_cast<uint32_t>(out.size());
    out.append(r.fragment);
  }
  return u;
}

std::string_view Url::origin_key() const {
  if (!origin_.empty()) return origin_;
  return View(0, has_host_ ? port_end_ : scheme_end_ + 1);
}

}  // namespace harvest::url
