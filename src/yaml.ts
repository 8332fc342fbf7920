import { createRequire } from 'node:module';
import type { ParseOptions, DocumentOptions, SchemaOptions, ToJSOptions } from 'yaml';

const require = createRequire(import.meta.url);

/** `yaml`'s `parse`, loaded at the first YAML file read: a run that reads none never loads it (~9 MB of RSS). */
export function parseYaml(text: string, options?: ParseOptions & DocumentOptions & SchemaOptions & ToJSOptions): unknown {
  return (require('yaml') as typeof import('yaml')).parse(text, options);
}
