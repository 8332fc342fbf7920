/** One downloadable GGUF: where it is (pinned to a revision), what its bytes hash to, how many there are. */
interface CatalogModel {
  /** The name `joulebench fetch model NAME` takes. */
  name: string;
  /** A URL pinned to a repository revision, so the bytes behind it cannot change. */
  url: string;
  /** sha256 of the file, lowercase hex; `null` when no verifiable hash is known (then `--sha256` is required). */
  sha256: string | null;
  /** Size of the file, bytes; `null` when unknown. */
  bytes: number | null;
  /** One line for the listing: the model, its quantisation, its licence. */
  about: string;
}

/** Models `joulebench fetch model` knows; hash and size are Hugging Face's Git LFS pointer at that revision. */
export const MODEL_CATALOG: readonly CatalogModel[] = [
  {
    name: 'qwen2.5-0.5b-instruct-q4_k_m',
    url: 'https://huggingface.co/bartowski/Qwen2.5-0.5B-Instruct-GGUF/resolve/b26a58accf53b1a19fbc555d52fdb224bec473f5/Qwen2.5-0.5B-Instruct-Q4_K_M.gguf',
    sha256: '6eb923e7d26e9cea28811e1a8e852009b21242fb157b26149d3b188f3a8c8653',
    bytes: 397_808_192,
    about: 'Qwen2.5-0.5B-Instruct, Q4_K_M GGUF (bartowski), 0.49 B parameters, 398 MB, Apache-2.0',
  },
];

/** The model `joulebench fetch model` fetches when no name is given. */
export const DEFAULT_CATALOG_MODEL = 'qwen2.5-0.5b-instruct-q4_k_m';

/** The catalog entry called `name`, or `undefined`. */
export function catalogModel(name: string): CatalogModel | undefined {
  return MODEL_CATALOG.find((m) => m.name === name);
}
