// Runs the script of an actions/github-script step as GitHub would, against a recorded GitHub: no network.
//
//   node github-script.cjs SCRIPT_FILE SCENARIO_FILE   (the working directory holds the downloaded artifact)
//
// The scenario gives the event (`workflowRun`), what GitHub would answer (`pull`, `files`, `comments`) and where its
// git repositories are (`serverUrl`: a file:// folder holding example/manifests.git);
// every call the script makes is printed as JSON, in order, for the test to check what would be posted.
const fs = require("fs");

async function main() {
  const [scriptFile, scenarioFile] = process.argv.slice(2);
  const scenario = JSON.parse(fs.readFileSync(scenarioFile, "utf8"));
  const calls = [];
  const answer = (name, respond) => async (params) => {
    calls.push({ call: name, params });
    const data = respond(params);
    if (data instanceof Error) throw data;
    return { data };
  };
  const notFound = Object.assign(new Error("Not Found"), { status: 404 });
  const github = {
    rest: {
      pulls: {
        get: answer("pulls.get", (p) => (scenario.pull && p.pull_number === scenario.pull.number ? scenario.pull : notFound)),
        // As GitHub's: at most 3,000 files, however many the pull request changes.
        listFiles: answer("pulls.listFiles", () => (scenario.files || []).slice(0, 3000)),
      },
      issues: {
        listComments: answer("issues.listComments", () => scenario.comments || []),
        createComment: answer("issues.createComment", () => ({ id: 1 })),
        updateComment: answer("issues.updateComment", () => ({})),
      },
      repos: { createCommitStatus: answer("repos.createCommitStatus", () => ({})) },
    },
    // The real paginate follows Link headers and concatenates the pages; one page is all a test needs.
    paginate: async (method, params) => (await method(params)).data,
  };
  const context = {
    repo: { owner: "example", repo: "manifests" },
    serverUrl: scenario.serverUrl || "https://github.invalid", // where `${serverUrl}/example/manifests.git` is
    payload: { workflow_run: scenario.workflowRun },
  };
  const core = {
    info: (message) => calls.push({ call: "core.info", params: String(message) }),
    warning: (message) => calls.push({ call: "core.warning", params: String(message) }),
    setFailed: (message) => calls.push({ call: "core.setFailed", params: String(message) }),
  };
  const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
  const script = new AsyncFunction("github", "context", "core", "require", fs.readFileSync(scriptFile, "utf8"));
  await script(github, context, core, require);
  process.stdout.write(JSON.stringify(calls));
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error));
  process.exit(1);
});
