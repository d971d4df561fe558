-- schedmate job_submit.lua (Slurm job_submit/lua, 22.05+): installed by `schedmate adapt slurm-plugin`.
--
-- Asks the schedmate annotation service about each new job and applies its answer: Comment, TimeMin or
-- TimeLimit, Nice, Switches, and AdminComment=schedmate:id=<service id> for `schedmate watch slurm`.
-- Thin on purpose: every rule is decided by the service (adapters/slurm_live/submit.py); this file collects
-- the job's fields, makes one HTTP call with curl and copies whitelisted numbers back, checking each
-- against its bounds (a time is never raised above the user's request, here as well as in the service).
--
-- Fail open: no config, service down or slower than timeout_s, any other answer than 200, a malformed
-- answer or a Lua error: the reason goes to slurmctld's log and the job is submitted unchanged.
--
-- Job text (script, name, comment, workdir) goes only into the request body file, escaped as JSON; the
-- curl command line holds nothing but the configured curl path and a temporary file name. slurmctld
-- waits for this call with its job lock held: keep timeout_s short (default 2 s).

local CONF_NAME = "schedmate_submit.conf"
local SHIM_KEYS = { url = true, token_file = true, timeout_s = true, curl = true, enabled = true }
local MAX_SCRIPT = 65536

local function log(fmt, ...)
  slurm.log_info("schedmate: " .. string.format(fmt, ...))
end

local function conf_path()
  local src = debug.getinfo(1, "S").source
  return (src:match("^@(.*/)") or "./") .. CONF_NAME
end

-- key = value lines; '#' starts a comment line. Keys the shim does not use are site policy for the service.
local function read_conf(path)
  local f = io.open(path, "r")
  if not f then return nil, nil, "cannot read " .. path end
  local conf, options = {}, {}
  for line in f:lines() do
    local k, v = line:match("^%s*([%w_]+)%s*=%s*(.-)%s*$")
    if k then
      if SHIM_KEYS[k] then conf[k] = v else options[k] = v end
    end
  end
  f:close()
  return conf, options, nil
end

-- JSON string: printable ASCII as is, every other byte (and " \) as \u00XX; the service maps the code points
-- back to bytes and decodes them as UTF-8, so any script survives and the body is always valid JSON.
local function jstr(s)
  return '"' .. s:gsub('[%c"\\\128-\255]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
end

local function jval(v)
  local t = type(v)
  if t == "string" then return jstr(v) end
  if t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return "null" end
    return string.format("%.0f", v)
  end
  if t == "boolean" then return tostring(v) end
  return "null"
end

local function jobject(pairs_list)
  local parts = {}
  for _, kv in ipairs(pairs_list) do
    parts[#parts + 1] = jstr(kv[1]) .. ":" .. kv[2]
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

local function shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function read_all(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local function write_file(path, text)
  local f, err = io.open(path, "w")
  if not f then return false, err end
  f:write(text)
  f:close()
  return true
end

local function uuid()
  local u = read_all("/proc/sys/kernel/random/uuid")
  u = u and u:match("^%s*([0-9a-f%-]+)%s*$")
  if u and #u == 36 then return u end
  return nil
end

-- The partition whose DefaultTime / MaxTime the job gets when it names none (or the one it names).
local function partition_of(job_desc, part_list)
  local wanted = job_desc.partition
  if wanted and wanted:find(",") then return nil end
  for name, part in pairs(part_list or {}) do
    if (wanted and (part.name or name) == wanted) or (not wanted and part.flag_default == 1) then
      return part
    end
  end
  return nil
end

local function request_body(job_desc, part_list, options)
  local key = uuid()
  if not key then return nil, nil, "no UUID from /proc/sys/kernel/random/uuid" end
  local argv = {}
  local argc = tonumber(job_desc.argc) or 0
  local args = argc > 0 and job_desc.argv or nil
  for i = 0, math.min(argc, 512) - 1 do
    if args and args[i] then argv[#argv + 1] = jstr(args[i]) end
  end
  local opts = {}
  for k, v in pairs(options) do opts[#opts + 1] = { k, jstr(v) } end
  local part = partition_of(job_desc, part_list)
  local script = job_desc.script
  if script and #script > MAX_SCRIPT then script = script:sub(1, MAX_SCRIPT) end
  local body = jobject({
    { "key", jstr(key) },
    { "user", jval(job_desc.user_name) },
    { "uid", jval(job_desc.user_id) },
    { "name", jval(job_desc.name) },
    { "partition", jval(job_desc.partition or (part and part.name)) },
    { "work_dir", jval(job_desc.work_dir) },
    { "script", jval(script) },
    { "argv", "[" .. table.concat(argv, ",") .. "]" },
    { "comment", jval(job_desc.comment) },
    { "time_limit", jval(job_desc.time_limit) },
    { "time_min", jval(job_desc.time_min) },
    { "part_default_time", jval(part and part.default_time) },
    { "part_max_time", jval(part and part.max_time) },
    { "nice", jval(job_desc.nice) },
    { "nice_offset", jval(slurm.NICE_OFFSET) },
    { "min_nodes", jval(job_desc.min_nodes) },
    { "num_tasks", jval(job_desc.num_tasks) },
    { "tres_per_node", jval(job_desc.tres_per_node) },
    { "tres_per_job", jval(job_desc.tres_per_job) },
    { "tres_per_task", jval(job_desc.tres_per_task) },
    { "req_switch", jval(job_desc.req_switch) },
    { "wait4switch", jval(job_desc.wait4switch) },
    { "options", jobject(opts) },
  })
  return body, key, nil
end

-- One POST with curl; the URL, token and body go through a 0600 curl config file, not the command line.
local function call_service(conf, body)
  local url = conf.url or ""
  if not url:match("^https?://[%w%.%-_:%[%]/]+$") then return nil, "url missing or malformed in " .. CONF_NAME end
  local token = read_all(conf.token_file or "")
  token = token and token:match("^%s*([%w_%-%.~+/=]+)%s*$")
  if not token then return nil, "token_file missing, unreadable or malformed" end
  local timeout = tonumber(conf.timeout_s) or 2
  if timeout <= 0 or timeout > 30 then timeout = 2 end
  local curl = conf.curl or "/usr/bin/curl"
  if not curl:match("^/[%w/_%.%-]+$") then return nil, "curl must be an absolute path" end

  local body_file, cfg_file = os.tmpname(), os.tmpname()
  local ok, err = write_file(body_file, body)
  if ok then
    ok, err = write_file(cfg_file, table.concat({
      'url = "' .. url:gsub("/+$", "") .. '/v1/slurm/submit"',
      'header = "Authorization: Bearer ' .. token .. '"',
      'header = "Content-Type: application/json"',
      'data-binary = "@' .. body_file .. '"',
      string.format("max-time = %.3f", timeout),
      string.format("connect-timeout = %.3f", timeout),
      'proto = "=http,https"',
      'noproxy = "*"',
      "silent", "show-error",
      'write-out = "\\n__status=%{http_code}"',
    }, "\n") .. "\n")
  end
  local out = nil
  if ok then
    local p = io.popen(shell_quote(curl) .. " -q -K " .. shell_quote(cfg_file) .. " 2>&1", "r")
    if p then
      out = p:read("*a")
      p:close()
    else
      err = "cannot run " .. curl
    end
  end
  os.remove(body_file)
  os.remove(cfg_file)
  if not out then return nil, err or "no output" end
  local text, status = out:match("^(.*)\n__status=(%d+)%s*$")
  if not status then return nil, "curl: " .. out:sub(1, 200):gsub("%c", " ") end
  if status ~= "200" then
    return nil, "service answered " .. status .. ": " .. text:sub(1, 200):gsub("%c", " ")
  end
  return text, nil
end

local function int_in(v, lo, hi)
  local n = tonumber(v)
  if n and n == math.floor(n) and n >= lo and n <= hi then return n end
  return nil
end

local function set_value(v)
  return v ~= nil and v ~= slurm.NO_VAL and v ~= slurm.INFINITE
end

-- Copy the answer's whitelisted fields, each within its bounds; returns what was set, for the log.
local function apply(job_desc, text)
  local ans, notes = {}, {}
  for line in text:gmatch("[^\n]+") do
    local k, v = line:match("^([%w_]+)=(.*)$")
    if k == "note" then notes[#notes + 1] = v elseif k then ans[k] = v end
  end
  local done = {}
  if not (ans.id and ans.id:match("^slurm%-[%x%-]+$") and #ans.id <= 64) then
    return nil, "answer without a valid id"
  end
  if job_desc.admin_comment == nil or job_desc.admin_comment == "" then
    job_desc.admin_comment = "schedmate:id=" .. ans.id
  end
  done[#done + 1] = ans.id
  if ans.comment and ans.comment ~= "" then
    job_desc.comment = ans.comment:gsub("[^ -~]", "_"):sub(1, 250)
    done[#done + 1] = "comment"
  end
  local user_limit = set_value(job_desc.time_limit) and job_desc.time_limit or nil
  local limit = int_in(ans.time_limit, 1, user_limit or 5256000)
  if limit then
    job_desc.time_limit = limit
    done[#done + 1] = "time_limit=" .. limit
  end
  local time_min = int_in(ans.time_min, 1, limit or user_limit or 5256000)
  if time_min and not set_value(job_desc.time_min) then
    job_desc.time_min = time_min
    done[#done + 1] = "time_min=" .. time_min
  end
  local nice = int_in(ans.nice, 0, 10000)
  if nice and not set_value(job_desc.nice) then
    job_desc.nice = slurm.NICE_OFFSET + nice
    done[#done + 1] = "nice=" .. nice
  end
  local switches, wait = int_in(ans.req_switch, 1, 64), int_in(ans.wait4switch, 0, 86400)
  if switches and wait and not set_value(job_desc.req_switch) then
    job_desc.req_switch = switches
    job_desc.wait4switch = wait
    done[#done + 1] = "switches=" .. switches .. "@" .. wait .. "s"
  end
  return table.concat(done, " ") .. (#notes > 0 and (" (" .. table.concat(notes, "; ") .. ")") or ""), nil
end

local function annotate(job_desc, part_list, submit_uid)
  local conf, options, err = read_conf(conf_path())
  if not conf then return "not annotated: " .. err end
  if conf.enabled == "no" then return nil end
  local body, key
  body, key, err = request_body(job_desc, part_list, options)
  if not body then return "not annotated: " .. err end
  local text
  text, err = call_service(conf, body)
  if not text then return "job " .. key .. " of uid " .. tostring(submit_uid) .. " not annotated: " .. err end
  local done
  done, err = apply(job_desc, text)
  if not done then return "job " .. key .. " not annotated: " .. err end
  return "uid " .. tostring(submit_uid) .. ": " .. done
end

function slurm_job_submit(job_desc, part_list, submit_uid)
  local ok, msg = pcall(annotate, job_desc, part_list, submit_uid)
  if not ok then
    log("not annotated (fail open): %s", tostring(msg))
  elseif msg then
    log("%s", msg)
  end
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end

return slurm.SUCCESS
