/** Loads every id with `load` and resolves to the results, in the order of `ids`. */
export async function loadAll(ids, load) {
  const results = [];
  ids.forEach(async (id) => {
    results.push(await load(id));
  });
  return results;
}
