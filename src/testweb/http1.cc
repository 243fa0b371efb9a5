// HTTP/1.1 message text (RFC 9112): the request head parser, reason phrases and the
// --http-redirect answer.
#include <cstdlib>
#include <string>

#include "base/ascii.h"
#include "testweb/internal.h"

namespace harvest::testweb {

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 410:
      return "Gone";
    case 413:
      return "Content Too Large";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

bool ParseHead(std::string_view head, Request* req, size_t* content_length, bool* keep_alive) {
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  size_t sp1 = line.find(' ');
  size_t sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1) return false;
  req->method = std::string(line.substr(0, sp1));
  req->target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  std::string_view version = line.substr(sp2 + 1);
  if (version.substr(0, 5) != "HTTP/") return false;
  *keep_alive = version != "HTTP/1.0";
  *content_length = 0;
  if (req->target.rfind("http://", 0) == 0) {  // absolute-form: the authority is the host
    size_t slash = req->target.find('/', 7);
    req->host = req->target.substr(7, slash == std::string::npos ? std::string::npos : slash - 7);
    req->target = slash == std::string::npos ? "/" : req->target.substr(slash);
  }
  while (eol != std::string_view::npos) {
    size_t start = eol + 2;
    eol = head.find("\r\n", start);
    std::string_view h = head.substr(start, eol == std::string_view::npos ? eol : eol - start);
    size_t colon = h.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = h.substr(0, colon);
    std::string_view value = TrimHttpOwsAndCr(h.substr(colon + 1));
    if (EqualsIgnoreAsciiCase(name, "host")) {
      if (req->host.empty()) req->host = std::string(value);
    } else if (EqualsIgnoreAsciiCase(name, "accept-encoding")) {
      req->accept_encoding = std::string(value);
    } else if (EqualsIgnoreAsciiCase(name, "if-none-match")) {
      req->if_none_match = std::string(value);
    } else if (EqualsIgnoreAsciiCase(name, "if-modified-since")) {
      req->if_modified_since = std::string(value);
    } else if (EqualsIgnoreAsciiCase(name, "connection")) {
      if (EqualsIgnoreAsciiCase(value, "close")) *keep_alive = false;
      if (EqualsIgnoreAsciiCase(value, "keep-alive")) *keep_alive = true;
    } else if (EqualsIgnoreAsciiCase(name, "content-length")) {
      char* end = nullptr;
      std::string v(value);
      unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0') return false;
      *content_length = n > kMaxBodyBytes ? kMaxBodyBytes + 1 : static_cast<size_t>(n);
    }
  }
  return true;
}

Response HttpsRedirect(const Request& request) {
  std::string host = ToLowerAscii(request.host);
  // The default port of http:// is not that of https://; another port stays as it was.
  if (host.size() > 3 && host.compare(host.size() - 3, 3, ":80") == 0) host.resize(host.size() - 3);
  Response r;
  r.status = 301;
  r.headers.push_back({"Location", "https://" + host + request.target});
  return r;
}

}  // namespace harvest::testweb
