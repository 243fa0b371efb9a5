// The test web's listen address: parsing "ADDR:PORT" (--listen) and printing an address.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>
#include <string>

#include "testweb/internal.h"

namespace harvest::testweb {

Status ParseListen(const std::string& listen, sockaddr_in* addr, std::string* host) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return Status::InvalidArgument("--listen " + listen + ": expected ADDR:PORT");
  }
  *host = listen.substr(0, colon);
  if (*host == "localhost" || host->empty()) *host = "127.0.0.1";
  std::string port = listen.substr(colon + 1);
  char* end = nullptr;
  long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535) {
    return Status::InvalidArgument("--listen " + listen + ": bad port '" + port + "'");
  }
  *addr = sockaddr_in{};
  addr->sin_family = AF_INET;
  addr->sin_port = htons(static_cast<uint16_t>(p));
  if (inet_pton(AF_INET, host->c_str(), &addr->sin_addr) != 1) {
    return Status::InvalidArgument("--listen " + listen + ": '" + *host +
                                   "' is not an IPv4 address");
  }
  return Status::Ok();
}

std::string AddressText(uint32_t host_order, uint16_t port) {
  in_addr a{};
  a.s_addr = htonl(host_order);
  char text[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &a, text, sizeof(text));
  return std::string(text) + ":" + std::to_string(port);
}

}  // namespace harvest::testweb
