-- saga.message: what the plugin tells the user — vim.notify with the saga
-- title, an LSP error as text, and the message that ends a command's reply.

local M = {}

local state = require('saga.state')

function M.notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = 'saga' })
end

function M.err_text(err)
  if type(err) == 'table' then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

-- The end of a command's reply: msg (when notify is on), then opts.callback(result).
function M.reply_done(opts, result, msg)
  if state.config.notify then
    M.notify(msg, state.config.notify_level)
  end
  if opts.callback then
    opts.callback(result)
  end
end

return M
