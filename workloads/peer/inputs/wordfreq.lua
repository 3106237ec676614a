-- Word frequencies of a text file, a string built by repeated concatenation (realloc of a growing buffer) and a
-- little floating-point work; writes the table to a file and a summary to stdout.
local input, output = arg[1], arg[2]
local counts, order, words = {}, {}, 0
for line in io.lines(input) do
  for w in line:gmatch("%a+") do
    w = w:lower()
    if not counts[w] then counts[w] = 0; order[#order + 1] = w end
    counts[w] = counts[w] + 1
    words = words + 1
  end
end
table.sort(order, function(a, b)
  if counts[a] ~= counts[b] then return counts[a] > counts[b] end
  return a < b
end)
local out = assert(io.open(output, "w"))
for i, w in ipairs(order) do out:write(string.format("%5d %-16s %d\n", i, w, counts[w])) end
out:close()
local big = {}
for i = 1, 20000 do big[#big + 1] = string.format("%d:%s;", i, order[(i % #order) + 1]) end
local joined = table.concat(big)
local s = 0.0
for i = 1, 20000 do s = s + math.sin(i * 0.001) / i end
print(string.format("%d words, %d distinct, joined %d bytes, series %.12f", words, #order, #joined, s))
print("top: " .. table.concat({order[1], order[2], order[3]}, ", "))
