#include "sandbox/seccomp_filter.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sandbox/spawn.h"

namespace caretz {

namespace {

#if defined(__x86_64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_X86_64;
// 32-bit programs enter through int 0x80 with their own numbers; x32 sets this bit.
constexpr uint32_t kCompatArch = AUDIT_ARCH_I386;
constexpr uint32_t kCompatIoctl = 54;
constexpr uint32_t kX32Bit = 0x40000000;
#elif defined(__aarch64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_AARCH64;
constexpr uint32_t kCompatArch = AUDIT_ARCH_ARM;
constexpr uint32_t kCompatIoctl = 54;
constexpr uint32_t kX32Bit = 0;
#else
#error "terminal_injection_filter: add this architecture's audit arch and ioctl numbers"
#endif

constexpr uint32_t kDenied = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);

sock_filter load(uint32_t offset) {
    return BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset);
}
sock_filter ret(uint32_t value) {
    return BPF_STMT(BPF_RET | BPF_K, value);
}
sock_filter jump_if(uint32_t value, uint8_t if_true, uint8_t if_false) {
    return BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, if_true, if_false);
}

// The request argument's low 32 bits: the kernel takes ioctl's request as an unsigned int, so
// the high bits must not let a caller slip past the comparison.
constexpr uint32_t kRequestLow = offsetof(seccomp_data, args[1])
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                                 + 4
#endif
    ;

}  // namespace

UniqueFd terminal_injection_filter() {
    // BPF jumps are relative to the next instruction; the comments give each target.
    const sock_filter program[] = {
        /* 0 */ load(offsetof(seccomp_data, arch)),
        /* 1 */ jump_if(kNativeArch, 0, 5),  // else → 7
        /* 2 */ load(offsetof(seccomp_data, nr)),
        /* 3 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, kX32Bit, 0, 1),
        /* 4 */ ret(kDenied),               // x32 calls: nothing in a sandbox needs them
        /* 5 */ jump_if(__NR_ioctl, 5, 0),  // → 11
        /* 6 */ ret(SECCOMP_RET_ALLOW),
        /* 7 */ jump_if(kCompatArch, 0, 2),  // else → 10
        /* 8 */ load(offsetof(seccomp_data, nr)),
        /* 9 */ jump_if(kCompatIoctl, 1, 4),     // → 11, else → 14
        /* 10 */ ret(SECCOMP_RET_KILL_PROCESS),  // an architecture this filter does not know
        /* 11 */ load(kRequestLow),
        /* 12 */ jump_if(TIOCSTI, 2, 0),    // → 15
        /* 13 */ jump_if(TIOCLINUX, 1, 0),  // → 15
        /* 14 */ ret(SECCOMP_RET_ALLOW),
        /* 15 */ ret(kDenied),
    };
    return sealed_memory_file(
        "caretz-seccomp", std::string_view(reinterpret_cast<const char*>(program), sizeof program));
}

}  // namespace caretz
