#include "sandbox/protection/search_record.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/unit/temp_dir.h"

using namespace caretz;
namespace fs = std::filesystem;

namespace {

FolderSeen seen(ino_t ino, time_t sec) {
    return FolderSeen{2049, ino, {sec, 123456789}, false};
}

const std::vector<std::string> kRoots = {"/work/ws", "/srv/extra"};

// Folders whose paths share their beginnings in every way the format must carry: a name with a
// newline, bytes that are not UTF-8, a path shorter than the one before, another root.
SearchRecord sample() {
    SearchRecord record;
    record.folders = {{"/work/ws", seen(10, 1700000000)},
                      {"/work/ws/a", seen(11, 1700000001)},
                      {"/work/ws/a/line\nbreak", seen(12, 1700000002)},
                      {"/work/ws/a/\xff\xfe", seen(13, 1700000003)},
                      {"/work/ws/b", seen(14, 1700000004)},
                      {"/srv/extra", seen(15, -5)}};
    record.folders[3].second.racy = true;
    record.git_dirs = {"/work/ws/a/line\nbreak"};
    record.git_links = {"/work/ws/b/.git"};
    record.unreadable = {"/srv/extra"};
    record.run_entries = {"/work/ws/b/.vscode"};
    return record;
}

void write(const SearchRecordFile& file, const SearchRecord& record) {
    REQUIRE(write_search_record(file, record.folders, record));
}

std::string contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
}

void put(const std::string& path, const std::string& bytes) {
    ::unlink(path.c_str());
    std::ofstream(path, std::ios::binary) << bytes;
    ::chmod(path.c_str(), 0600);
}

}  // namespace

TEST_CASE("a search record reads back as it was written, whatever bytes its paths hold") {
    TempDir dir;
    const std::string state = dir.path();
    const SearchRecordFile file = search_record_file(state, kRoots, {"/work/ws/secret"});
    const SearchRecord record = sample();
    write(file, record);
    struct stat st;
    REQUIRE(::stat(file.path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    auto back = read_search_record(file, kRoots);
    REQUIRE(back);
    REQUIRE(back->folders.size() == record.folders.size());
    for (size_t i = 0; i < record.folders.size(); ++i) {
        const auto& [path, was] = record.folders[i];
        const auto& [read_path, read] = back->folders[i];
        CHECK(read_path == path);
        CHECK(read.dev == was.dev);
        CHECK(read.ino == was.ino);
        CHECK(read.ctime.tv_sec == was.ctime.tv_sec);
        CHECK(read.ctime.tv_nsec == was.ctime.tv_nsec);
        CHECK(read.racy == was.racy);
    }
    CHECK(back->git_dirs == record.git_dirs);
    CHECK(back->git_links == record.git_links);
    CHECK(back->unreadable == record.unreadable);
    CHECK(back->run_entries == record.run_entries);
}

TEST_CASE("a search record is read only for the search that made it") {
    TempDir dir;
    const std::string state = dir.path();
    const SearchRecordFile file = search_record_file(state, kRoots, {});
    write(file, sample());
    // The same roots in another order name the same record.
    CHECK(search_record_file(state, {kRoots[1], kRoots[0]}, {}).path == file.path);
    // Other hidden folders name another, and a record put in its place is not read.
    const SearchRecordFile other = search_record_file(state, kRoots, {"/work/ws/a"});
    CHECK(other.path != file.path);
    put(other.path, contents(file.path));
    CHECK_FALSE(read_search_record(other, kRoots));
    // Nor is one that names a folder outside the roots it is read for.
    CHECK_FALSE(read_search_record(file, {"/work/ws"}));
    CHECK(read_search_record(file, kRoots));
}

TEST_CASE("a search record that was cut short, added to or changed is not read") {
    TempDir dir;
    const std::string state = dir.path();
    const SearchRecordFile file = search_record_file(state, kRoots, {});
    write(file, sample());
    const std::string whole = contents(file.path);
    for (size_t size = 0; size < whole.size(); ++size) {
        put(file.path, whole.substr(0, size));
        INFO(size);
        CHECK_FALSE(read_search_record(file, kRoots));
    }
    put(file.path, whole + "x");
    CHECK_FALSE(read_search_record(file, kRoots));
    put(file.path, whole);
    CHECK(read_search_record(file, kRoots));

    // A finding of a folder the record does not hold.
    SearchRecord record = sample();
    record.git_dirs.push_back("/work/ws/c");
    write(file, record);
    CHECK_FALSE(read_search_record(file, kRoots));
    record = sample();
    record.git_links.push_back("/work/ws/c/.git");
    write(file, record);
    CHECK_FALSE(read_search_record(file, kRoots));
}

TEST_CASE("a search record that others may write, or a link to one, is not read") {
    TempDir dir;
    const std::string state = dir.path();
    const SearchRecordFile file = search_record_file(state, kRoots, {});
    write(file, sample());
    REQUIRE(read_search_record(file, kRoots));
    ::chmod(file.path.c_str(), 0620);
    CHECK_FALSE(read_search_record(file, kRoots));
    ::chmod(file.path.c_str(), 0602);
    CHECK_FALSE(read_search_record(file, kRoots));
    ::chmod(file.path.c_str(), 0600);
    const std::string elsewhere = state + "/elsewhere";
    REQUIRE(::rename(file.path.c_str(), elsewhere.c_str()) == 0);
    REQUIRE(::symlink(elsewhere.c_str(), file.path.c_str()) == 0);
    CHECK_FALSE(read_search_record(file, kRoots));
}

TEST_CASE(
    "search records not used for 30 days, and what dead writers left, are removed when another is "
    "written") {
    TempDir dir;
    const std::string state = dir.path();
    const SearchRecordFile old = search_record_file(state, {"/old"}, {});
    const SearchRecordFile recent = search_record_file(state, {"/recent"}, {});
    const SearchRecordFile used = search_record_file(state, {"/used"}, {});
    for (const auto* file : {&old, &recent, &used}) {
        const std::string root = file == &old ? "/old" : file == &recent ? "/recent" : "/used";
        REQUIRE(write_search_record(*file, {{root, seen(1, 1)}}, {}));
    }
    const std::string mine = state + "/notes";
    put(mine, "not a record");
    // What writers that died left: an hour is more than any writer takes.
    const std::string left = used.path + ".4242.tmp";
    const std::string writing = recent.path + ".4343.tmp";
    put(left, "half");
    put(writing, "half");
    auto age = [](const std::string& path, time_t days) {
        const timespec times[2] = {{::time(nullptr) - days * 86400, 0},
                                   {::time(nullptr) - days * 86400, 0}};
        REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
    };
    age(old.path, 31);
    age(recent.path, 29);
    age(used.path, 31);
    age(mine, 90);
    age(left, 1);
    // Reading a record counts as using it.
    REQUIRE(read_search_record(used, {"/used"}));
    const SearchRecordFile next = search_record_file(state, {"/next"}, {});
    REQUIRE(write_search_record(next, {{"/next", seen(1, 1)}}, {}));
    CHECK_FALSE(fs::exists(old.path));
    CHECK(fs::exists(recent.path));
    CHECK(fs::exists(used.path));
    CHECK(fs::exists(mine));
    CHECK_FALSE(fs::exists(left));
    CHECK(fs::exists(writing));
    CHECK(fs::exists(next.path));
}

TEST_CASE(
    "folders on a device whose change times are not relied on are recorded to be listed again") {
    TempDir dir;
    const std::string state = dir.path();
    const SearchRecordFile file = search_record_file(state, {"/w"}, {});
    FolderSeen fuse = seen(2, 1700000000);
    fuse.dev = 77;
    REQUIRE(write_search_record(file, {{"/w", seen(1, 1700000000)}, {"/w/fuse", fuse}}, {}, {77}));
    auto back = read_search_record(file, {"/w"});
    REQUIRE(back);
    REQUIRE(back->folders.size() == 2);
    CHECK_FALSE(back->folders[0].second.racy);
    CHECK(back->folders[1].second.racy);
}
