// The registry's GraphiQL page (a file, not inline: the page's policy runs no inline script).
// Adapted from strawberry-graphql's graphiql.html (MIT). `?query=` (or `?q=`), `variables` and
// `operationName` prefill the editors, so a page can link to a ready-made query.
(function () {
  "use strict";
  const parameters = Object.fromEntries(new URLSearchParams(window.location.search));
  const initialQuery = parameters.query || parameters.q || "{\n  commit { id committedAt }\n}\n";

  function updateURL(changes) {
    Object.assign(parameters, changes);
    delete parameters.q;
    const kept = Object.entries(parameters).filter(([, value]) => Boolean(value));
    history.replaceState(null, "", "?" + new URLSearchParams(kept).toString());
  }

  const fetcher = GraphiQL.createFetcher({
    url: window.location.href.split("?")[0],
    headers: { accept: "application/graphql-response+json, application/json;q=0.9" },
  });

  function RegistryGraphiQL() {
    const [query, setQuery] = React.useState(initialQuery);
    const [variables, setVariables] = React.useState(parameters.variables);
    const explorerPlugin = React.useMemo(() => GraphiQLPluginExplorer.explorerPlugin(), []);
    return React.createElement(GraphiQL, {
      fetcher,
      plugins: [explorerPlugin],
      query,
      variables,
      operationName: parameters.operationName,
      defaultEditorToolsVisibility: true,
      onEditQuery: (text) => { setQuery(text); updateURL({ query: text }); },
      onEditVariables: (text) => { setVariables(text); updateURL({ variables: text }); },
      onEditOperationName: (name) => updateURL({ operationName: name }),
      inputValueDeprecation: true,
    });
  }

  ReactDOM.createRoot(document.getElementById("graphiql")).render(React.createElement(RegistryGraphiQL));
})();
