// graphql-codegen's client preset over the registry's SDL snapshot (tests/schema.graphql, which a test keeps
// equal to the served schema): typed documents for the recipes of the API guide, the DateTime scalar mapped
// to string, every custom scalar required to be mapped (strictScalars), and the persisted documents as
// codegen writes them (sha256 hashes). Run by tests/test_clients_js.py.
import type { CodegenConfig } from "@graphql-codegen/cli";

const config: CodegenConfig = {
  emitLegacyCommonJSImports: false, // relative imports with `.js`, as Node's ESM (and tsc's nodenext) want
  schema: "../schema.graphql",
  documents: ["recipes/*.ts"],
  ignoreNoDocuments: false,
  generates: {
    "generated/": {
      preset: "client",
      config: {
        scalars: { DateTime: "string", JSON: "unknown" },
        strictScalars: true,
        useTypeImports: true,
        enumsAsTypes: true,
      },
      presetConfig: { fragmentMasking: false, persistedDocuments: { hashAlgorithm: "sha256" } },
    },
  },
};

export default config;
