// ParseHttpResponse: the HTTP response inside an application/http;msgtype=response block.
#include "store/internal.h"
#include "store/store.h"

namespace harvest::store {

Result<HttpResponse> ParseHttpResponse(std::string_view block) {
  size_t crlf = block.find("\r\n\r\n");
  size_t lf = block.find("\n\n");
  size_t head_len = 0;
  size_t body_start = 0;
  if (crlf == std::string_view::npos && lf == std::string_view::npos) {
    return Status::Corruption("HTTP response head not terminated by an empty line");
  }
  if (lf == std::string_view::npos || (crlf != std::string_view::npos && crlf < lf)) {
    head_len = crlf;
    body_start = crlf + 4;
  } else {
    head_len = lf;
    body_start = lf + 2;
  }
  std::string_view head = block.substr(0, head_len);
  size_t eol = head.find('\n');
  std::string_view line = head.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // status-line = HTTP-version SP status-code SP [ reason-phrase ]  (RFC 9112 §4);
  // "HTTP/2 200" as libcurl reports HTTP/2 is accepted too.
  if (line.substr(0, 5) != "HTTP/") {
    return Status::InvalidArgument("not an HTTP response: status line '" +
                                   std::string(line.substr(0, 60)) + "'");
  }
  size_t sp = line.find(' ');
  if (sp == std::string_view::npos || line.size() < sp + 4) {
    return Status::InvalidArgument("HTTP status line without a status code");
  }
  std::string_view code = line.substr(sp + 1, 3);
  int status = 0;
  for (char c : code) {
    if (c < '0' || c > '9') return Status::InvalidArgument("HTTP status code is not 3 digits");
    status = status * 10 + (c - '0');
  }
  if (line.size() > sp + 4 && line[sp + 4] != ' ') {
    return Status::InvalidArgument("HTTP status code is not 3 digits");
  }
  HttpResponse r;
  r.status = status;
  if (line.size() > sp + 5) r.reason = std::string(line.substr(sp + 5));
  if (eol != std::string_view::npos) internal::ParseHeaderLines(head.substr(eol + 1), &r.headers);
  r.body = std::string(block.substr(body_start));
  return r;
}

}  // namespace harvest::store
