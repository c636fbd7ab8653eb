// The bundle's stand-in for `@modelcontextprotocol/server/_shims` (scripts/build-server.mjs aliases it): the SDK's Node
// shim is these two exports with Ajv as the default validator, which this server never uses (create-server.ts passes
// its own), so bundling the original would load Ajv's 215 KB on every start for nothing.
export { default as process } from 'node:process';
export { FormAnswerValidator as DefaultJsonSchemaValidator } from './form-answer-validator.js';
