import { describe, expect, it } from "vitest";
import { detectSource, displayUrl } from "../../../src/install/source.js";

describe("install source detection (spec §10.1)", () => {
  it.each([
    // 1. org/repo shorthand
    ["myorg/my-agent-workflow", "git", "https://github.com/myorg/my-agent-workflow.git", "my-agent-workflow"],
    ["Org_1/repo.name", "git", "https://github.com/Org_1/repo.name.git", "repo.name"],
    // 2. known git hosts: exactly /owner/repo[.git][/]
    ["https://github.com/myorg/my-agent-workflow", "git", "https://github.com/myorg/my-agent-workflow", "my-agent-workflow"],
    ["https://github.com/org/repo/", "git", "https://github.com/org/repo/", "repo"],
    ["https://github.com/org/repo.git", "git", "https://github.com/org/repo.git", "repo"],
    ["https://github.com/org/repo.git/", "git", "https://github.com/org/repo.git/", "repo"],
    ["https://GitHub.com/org/repo", "git", "https://GitHub.com/org/repo", "repo"],
    ["http://gitlab.com/group/project", "git", "http://gitlab.com/group/project", "project"],
    ["https://bitbucket.org/team/tool.git", "git", "https://bitbucket.org/team/tool.git", "tool"],
    ["ssh://git@github.com/org/repo", "git", "ssh://git@github.com/org/repo", "repo"],
    // known hosts, other paths: continue with the remaining rules
    ["https://github.com/org/repo/archive/refs/heads/main.tar.gz", "tarball", "https://github.com/org/repo/archive/refs/heads/main.tar.gz", "main"],
    ["https://gitlab.com/g/p/-/archive/v1/p-v1.tgz", "tarball", "https://gitlab.com/g/p/-/archive/v1/p-v1.tgz", "p-v1"],
    ["https://github.com/org/repo/sub.git", "git", "https://github.com/org/repo/sub.git", "sub"],
    // 3. other URLs ending in .git
    ["https://example.com/path/to/flows.git", "git", "https://example.com/path/to/flows.git", "flows"],
    ["file:///srv/git/ralph.git", "git", "file:///srv/git/ralph.git", "ralph"],
    ["git://127.0.0.1:9418/org/repo.git", "git", "git://127.0.0.1:9418/org/repo.git", "repo"],
    ["git@example.com:org/thing.git", "git", "git@example.com:org/thing.git", "thing"],
    ["https://www.github.com/org/repo.git", "git", "https://www.github.com/org/repo.git", "repo"],
    // 4. tarballs: pathname ends in .tar.gz/.tgz, query and fragment ignored
    ["https://example.com/dl/my-flow.tar.gz", "tarball", "https://example.com/dl/my-flow.tar.gz", "my-flow"],
    ["https://example.com/dl/my-flow.tgz?token=abc&x=.zip", "tarball", "https://example.com/dl/my-flow.tgz?token=abc&x=.zip", "my-flow"],
    ["http://127.0.0.1:8080/a/b/flow_2.tar.gz#frag", "tarball", "http://127.0.0.1:8080/a/b/flow_2.tar.gz#frag", "flow_2"],
    ["https://example.com/v1.2.tar.gz", "tarball", "https://example.com/v1.2.tar.gz", "v1.2"],
  ])("%s → %s", (input, kind, url, name) => {
    expect(detectSource(input)).toEqual({ kind, url, name });
  });

  it.each([
    ["org/repo.git", /must not end in \.git.*https:\/\/github\.com\/org\/repo\.git/],
    ["https://github.com/org/repo/tree/main", /single-file installs are not supported/],
    ["https://github.com/org", /single-file installs are not supported/],
    ["https://example.com/script.sh", /single-file installs are not supported/],
    ["https://example.com/flow.zip", /single-file installs are not supported/],
    ["https://example.com/flow.tar.gz/", /single-file installs are not supported/],
    ["https://example.com/flow.tar", /single-file installs are not supported/],
    ["https://raw.githubusercontent.com/org/repo/main/index.ts", /single-file installs are not supported/],
    ["org/repo/extra", /unsupported source.*single-file installs are not supported/],
    ["just-a-name", /unsupported source/],
    ["./local/flow.tgz", /unsupported source/],
    ["/abs/path/repo.git", /unsupported source/],
    ["../repo", /unsupported source/],
    ["", /invalid source/],
    ["ftp://example.com/flow.tar.gz", /http or https/],
    ["file:///tmp/flow.tgz", /http or https/],
  ])("rejects %j", (input, message) => {
    expect(() => detectSource(input)).toThrow(message);
  });

  it("never repeats credentials in messages", () => {
    expect(displayUrl("https://user:secret@example.com/x.tgz")).toBe("https://example.com/x.tgz");
    expect(() => detectSource("https://user:secret@example.com/x.zip")).toThrow(/^(?!.*secret).*$/);
  });
});
