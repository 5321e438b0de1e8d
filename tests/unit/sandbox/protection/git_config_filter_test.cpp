#include "sandbox/protection/git_config_filter.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace caretz;

TEST_CASE("a repository made in the sandbox keeps what git init and git clone write") {
    for (const char* key :
         {"core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
          "core.worktree", "extensions.objectformat", "remote.origin.url", "remote.origin.fetch",
          "remote.up.stream.pushurl", "branch.main.remote", "branch.main.merge",
          "submodule.lib.url", "submodule.lib.active"})
        CHECK(kept_from_sandbox(key));
}

TEST_CASE("a repository made in the sandbox loses every setting that can run a command") {
    for (const char* key : {"core.hookspath",
                            "core.fsmonitor",
                            "core.sshcommand",
                            "core.pager",
                            "core.editor",
                            "core.askpass",
                            "core.gitproxy",
                            "core.alternaterefscommand",
                            "alias.st",
                            "filter.lfs.smudge",
                            "filter.x.process",
                            "diff.x.textconv",
                            "diff.external",
                            "merge.x.driver",
                            "pager.log",
                            "credential.helper",
                            "gpg.program",
                            "sequence.editor",
                            "uploadpack.packobjectshook",
                            "include.path",
                            "includeif.gitdir:/x.path",
                            "remote.origin.uploadpack",
                            "remote.origin.receivepack",
                            "protocol.ext.allow",
                            "submodule.lib.update",
                            "core",
                            "remote.url",
                            "core.url"})
        CHECK_FALSE(kept_from_sandbox(key));
}

TEST_CASE("git's --list --null output is read back, values and value-less keys alike") {
    using namespace std::string_literals;
    auto entries = parse_git_config_list("core.bare\nfalse\0core.weird\0remote.a.b.url\nx\ny\0"s);
    REQUIRE(entries);
    REQUIRE(entries->size() == 3);
    CHECK((*entries)[0].key == "core.bare");
    CHECK((*entries)[0].value == "false");
    CHECK_FALSE((*entries)[1].value);
    CHECK((*entries)[2].key == "remote.a.b.url");
    CHECK((*entries)[2].value == "x\ny");
    CHECK_FALSE(parse_git_config_list("core.bare\nfalse"s));
    CHECK_FALSE(parse_git_config_list("nodot\0"s));
}

TEST_CASE("the config Caretz writes reads back the same in git") {
    std::vector<GitConfigEntry> entries = {
        {"core.repositoryformatversion", "0"},
        {"core.bare", "false"},
        {"remote.Origin \"quoted\\.url", "https://example.invalid/a \"b\"\\c\td"},
        {"remote.Origin \"quoted\\.fetch", "+refs/heads/*:refs/remotes/origin/*"},
        {"remote.tab\there.url", "x"},
        {"submodule.back\\\tslash.url", "y"},
        {"branch.main.remote", "origin"},
        {"extensions.worktreeconfig", std::nullopt}};
    char path[] = "/tmp/caretz-config-XXXXXX";
    int fd = ::mkstemp(path);
    REQUIRE(fd >= 0);
    ::close(fd);
    std::ofstream(path) << git_config_text(entries);
    std::string out;
    std::string command =
        std::string("GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent git config --file ") + path +
        " --list --null";
    FILE* p = ::popen(command.c_str(), "r");
    REQUIRE(p);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    CHECK(::pclose(p) == 0);
    std::remove(path);
    auto back = parse_git_config_list(out);
    REQUIRE(back);
    REQUIRE(back->size() == entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
        CHECK((*back)[i].key == entries[i].key);
        CHECK((*back)[i].value == entries[i].value);
    }
}
