/** Loads every id with `load` and resolves to the results, in the order of `ids`. */
export async function loadAll(ids, load) {
  return Promise.all(ids.map((id) => load(id)));
}
