// What Caretz writes back into a git config a sandboxed command wrote: the input is what `git
// config --list --null` could print (the settings a command put there), the config Caretz
// keeps is written in git's syntax (git_config_text), and git itself reads that file back. It
// must find exactly the settings that were kept, in order: a value or subsection name that
// could end its line, open a section or add a key of its own (core.hooksPath, core.fsmonitor,
// include.path) would hand the sandbox a command the user's git runs on the host.

#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "sandbox/protection/git_config_filter.h"
#include "tests/fuzz/fuzz_common.h"

using namespace caretz;
using caretz::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto entries =
        parse_git_config_list(std::string_view(reinterpret_cast<const char*>(data), size));
    if (!entries) return 0;
    std::vector<GitConfigEntry> kept;
    for (auto& entry : *entries)
        if (kept_from_sandbox(entry.key)) kept.push_back(std::move(entry));
    const std::string text = git_config_text(kept);

    char path[] = "/tmp/caretz-fuzz-git-config-XXXXXX";
    int fd = ::mkstemp(path);
    require(fd >= 0, "cannot make a temporary file");
    require(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()),
            "cannot write the temporary file");
    ::close(fd);
    auto read_back = read_git_config(path);
    ::unlink(path);

    require(read_back.has_value(), "git cannot read the config Caretz wrote");
    require(read_back->size() == kept.size(), "git reads more or fewer settings than were kept");
    for (size_t i = 0; i < kept.size(); ++i) {
        require((*read_back)[i].key == kept[i].key, "git reads another key");
        // A key written without `=` reads as true either way.
        require((*read_back)[i].value == kept[i].value ||
                    (!kept[i].value && (*read_back)[i].value == std::string("true")),
                "git reads another value");
    }
    return 0;
}
